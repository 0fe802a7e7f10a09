package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/theme"
)

// Config is $XDG_CONFIG_HOME/kroscope/config.yaml:
//
//	theme: high-contrast      # auto, dark, light, high-contrast
//	ascii: false
//	keys:
//	  requeue: ["x"]          # action name → keys
//	  delete: ["ctrl+x"]
type Config struct {
	Theme string              `json:"theme,omitempty"`
	ASCII bool                `json:"ascii,omitempty"`
	Keys  map[string][]string `json:"keys,omitempty"`
}

// DefaultConfigPath is $XDG_CONFIG_HOME/kroscope/config.yaml, falling back
// to the user's config directory.
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	return filepath.Join(dir, "kroscope", "config.yaml")
}

// LoadConfig reads a config file. A missing file is an empty config; a
// malformed one is an error naming the file and the field.
func LoadConfig(path string) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading config %s: %w", path, err)
	}
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	if !theme.Valid(c.Theme) {
		_, err := theme.New(theme.Options{Name: c.Theme})
		return c, fmt.Errorf("config %s: theme: %w", path, err)
	}
	km := DefaultKeyMap()
	if err := km.Remap(c.Keys); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}
