// Package kubernetes_test checks the Kubernetes example: the configuration
// loads, and the manifests parse and refer to each other correctly. No
// cluster runs them here.
package kubernetes_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	_ "github.com/idsql/idsql/holder/etcd" // holder.kind: etcd
	"github.com/idsql/idsql/idsql/keyset"
)

func TestConfigLoads(t *testing.T) {
	cfg, err := keyset.Load("idsql.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Holder.Kind != "etcd" || cfg.Holder.Instance != keyset.InstanceOrdinal {
		t.Errorf("holder = %+v, want kind etcd with instance ordinal", cfg.Holder)
	}
	if _, err := keyset.Parse("x.yaml", []byte("namespace: shop\nholder: {kind: local, instance: ordinal, ordinal_offset: 0}\n"), time.Now()); err != nil {
		t.Errorf("the README's local-holder alternative: %v", err)
	}
}

// manifest is the part of a Kubernetes object the checks read.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Args         []string `yaml:"args"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readManifests(t *testing.T, file string) []manifest {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []manifest
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m.APIVersion == "" || m.Kind == "" || m.Metadata.Name == "" {
			t.Errorf("%s: object %d lacks apiVersion, kind or metadata.name: %+v", file, len(out), m)
		}
		out = append(out, m)
	}
}

func TestManifestsFit(t *testing.T) {
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources          []string `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.ConfigMapGenerator) != 1 || !slices.Equal(k.ConfigMapGenerator[0].Files, []string{"idsql.yaml"}) {
		t.Fatalf("kustomization.yaml: configMapGenerator = %+v, want one from idsql.yaml", k.ConfigMapGenerator)
	}
	kinds := map[string]manifest{}
	for _, r := range k.Resources {
		for _, m := range readManifests(t, r) {
			kinds[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	for _, want := range []string{"Service/etcd", "StatefulSet/etcd", "Service/idsql", "StatefulSet/idsql"} {
		if _, ok := kinds[want]; !ok {
			t.Errorf("no %s among the resources", want)
		}
	}
	pod := kinds["StatefulSet/idsql"].Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Volumes) != 1 {
		t.Fatalf("StatefulSet/idsql: want one container and one volume: %+v", pod)
	}
	if got := pod.Volumes[0].ConfigMap.Name; got != k.ConfigMapGenerator[0].Name {
		t.Errorf("StatefulSet/idsql mounts ConfigMap %q, the kustomization makes %q", got, k.ConfigMapGenerator[0].Name)
	}
	c := pod.Containers[0]
	var config string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config = string(v)
		}
	}
	mounted := false
	for _, vm := range c.VolumeMounts {
		mounted = mounted || vm.Name == pod.Volumes[0].Name && path.Join(vm.MountPath, "idsql.yaml") == config
	}
	if !mounted {
		t.Errorf("StatefulSet/idsql: --config=%s is not idsql.yaml in the ConfigMap's mount", config)
	}
}
