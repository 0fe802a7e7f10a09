// Package apiservertest holds the graph package's tests against a real
// kube-apiserver (test/envtest): generated CRDs with inferred status types,
// and resource types read from the server's OpenAPI. They live apart so the
// graph package's own test binary (and its fuzzing) stays small.
package apiservertest
