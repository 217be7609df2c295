package holderkind

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHoldersImportNoIdsqlPackage checks the layering: the holders, their
// registration point and the worker table sit below idsql, so none of
// them depends on a package under idsql/ (holdertest, the conformance
// suite, may use a generator to issue keys).
func TestHoldersImportNoIdsqlPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Deps " "}}`, "github.com/idsql/idsql/holder/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		if pkg == "github.com/idsql/idsql/holder/holdertest" {
			continue
		}
		seen++
		for _, d := range strings.Fields(deps) {
			if strings.HasPrefix(d, "github.com/idsql/idsql/idsql") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	if seen < 8 {
		t.Errorf("go list named %d holder packages; want every one:\n%s", seen, out)
	}
}
