//go:build tools

// Package tools pins modules the project is about to use so `go mod tidy`
// keeps them while their first users are being written.
package tools

import (
	_ "charm.land/bubbles/v2/key"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/go-logr/logr"
	_ "github.com/google/cel-go/cel"
	_ "github.com/google/cel-go/ext"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	_ "k8s.io/apiserver/pkg/cel/library"
	_ "k8s.io/client-go/dynamic/fake"
	_ "k8s.io/client-go/metadata/metadatainformer"
	_ "k8s.io/client-go/tools/leaderelection"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/controller-runtime/pkg/metrics"
	_ "sigs.k8s.io/yaml"
)
