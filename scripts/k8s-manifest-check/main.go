// Command k8s-manifest-check decodes Kubernetes manifests strictly into the k8s.io/api types, as
// an API server would before admission, without a cluster: an unknown or misspelt field, a
// duplicate key, a value of the wrong type, an invalid quantity or an unknown kind fails. It also
// checks names the way the API server does (DNS-1123 object and container names, C identifier
// environment variable names). On success it prints the decoded objects as one JSON array, the
// form the project's tests read; on failure, every problem found, one a line, and exits 1.
//
//	k8s-manifest-check deploy/kubernetes/worker.yaml
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-manifest-check FILE.yaml")
		os.Exit(2)
	}
	objects, problems := check(os.Args[1])
	if len(problems) > 0 {
		for _, problem := range problems {
			fmt.Fprintln(os.Stderr, problem)
		}
		os.Exit(1)
	}
	out, err := json.Marshal(objects)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

func check(file string) ([]runtime.Object, []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []string{err.Error()}
	}
	var objects []runtime.Object
	var problems []string
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	for index := 1; ; index++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, append(problems, fmt.Sprintf("%s: document %d: %v", file, index, err))
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		object, docProblems := decode(doc)
		for _, problem := range docProblems {
			problems = append(problems, fmt.Sprintf("%s: document %d: %s", file, index, problem))
		}
		if object != nil {
			objects = append(objects, object)
		}
	}
	if len(objects) == 0 && len(problems) == 0 {
		problems = append(problems, file+": no objects")
	}
	return objects, problems
}

// decode reads one document into its typed object, rejecting unknown and duplicate fields.
func decode(doc []byte) (runtime.Object, []string) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, []string{err.Error()}
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil || meta.Kind == "" {
		return nil, []string{fmt.Sprintf("apiVersion %q and kind %q do not name a type", meta.APIVersion, meta.Kind)}
	}
	object, err := scheme.Scheme.New(gv.WithKind(meta.Kind))
	if err != nil {
		return nil, []string{fmt.Sprintf("%s %s is not a built-in Kubernetes type: %v", meta.APIVersion, meta.Kind, err)}
	}
	if err := yaml.UnmarshalStrict(doc, object); err != nil {
		return nil, []string{fmt.Sprintf("%s %s: %v", meta.APIVersion, meta.Kind, err)}
	}
	return object, names(object)
}

// names checks what the API server's validation checks of names.
func names(object runtime.Object) []string {
	var problems []string
	accessor, ok := object.(interface{ GetName() string })
	if ok {
		for _, msg := range validation.IsDNS1123Subdomain(accessor.GetName()) {
			problems = append(problems, fmt.Sprintf("metadata.name %q: %s", accessor.GetName(), msg))
		}
	}
	spec := podSpecOf(object)
	if spec == nil {
		return problems
	}
	for _, container := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, msg := range validation.IsDNS1123Label(container.Name) {
			problems = append(problems, fmt.Sprintf("container name %q: %s", container.Name, msg))
		}
		for _, env := range container.Env {
			for _, msg := range validation.IsEnvVarName(env.Name) {
				problems = append(problems, fmt.Sprintf("container %s: env %q: %s", container.Name, env.Name, msg))
			}
		}
	}
	return problems
}

// podSpecOf finds the pod template of a workload through its JSON form, so that every workload
// kind is covered without a case for each.
func podSpecOf(object runtime.Object) *corev1.PodSpec {
	data, err := json.Marshal(object)
	if err != nil {
		return nil
	}
	var shape struct {
		Spec struct {
			Template *struct {
				Spec *corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if json.Unmarshal(data, &shape) != nil || shape.Spec.Template == nil {
		return nil
	}
	return shape.Spec.Template.Spec
}

// stripComments drops comment-only lines, so a document of comments alone counts as empty.
func stripComments(doc []byte) []byte {
	var kept []string
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return []byte(strings.Join(kept, "\n"))
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
