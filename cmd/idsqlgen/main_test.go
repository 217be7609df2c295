package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "idsql.yaml")
	os.WriteFile(good, []byte("namespace: n\ntables:\n  orders: {strategy: snowflake}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("namespace: n\ntables:\n  orders: {strategy: snowflake}\n  public.orders: {strategy: segment}\n"), 0o644)
	out := filepath.Join(dir, "idsql_gen.go")

	for _, tc := range []struct {
		name   string
		args   []string
		gopkg  string
		code   int
		stderr string
	}{
		{"ok", []string{"-config", good, "-pkg", "models", "-out", out}, "", 0, ""},
		{"GOPACKAGE", []string{"-config", good, "-out", out}, "models", 0, ""},
		{"unknown flag", []string{"-nope"}, "models", 2, "flag provided but not defined"},
		{"extra argument", []string{"-config", good, "x"}, "models", 2, `unexpected arguments ["x"]`},
		{"no package", []string{"-config", good}, "", 2, "-pkg is required"},
		{"bad package", []string{"-config", good, "-pkg", "a-b", "-out", out}, "", 1, `package name "a-b"`},
		{"missing config", []string{"-config", filepath.Join(dir, "none.yaml"), "-pkg", "m", "-out", out}, "", 1, "none.yaml"},
		{"collision", []string{"-config", bad, "-pkg", "m", "-out", out}, "", 1,
			bad + `:4: tables.public.orders: generated name OrderID of table "public.orders" clashes with table "orders"'s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tc.args, tc.gopkg, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderr)
			}
			if tc.code == 0 {
				src, err := os.ReadFile(out)
				if err != nil || !bytes.Contains(src, []byte("package models")) || !bytes.Contains(src, []byte("type OrderID int64")) {
					t.Errorf("output %s: %v", src, err)
				}
			}
		})
	}
}
