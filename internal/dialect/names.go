package dialect

import "strings"

// SplitQualified splits a configured table name into its dot-separated
// parts: each an SQL identifier (letters, digits, _; not starting with a
// digit), taken as it is, or a double-quoted name in which "" stands for ",
// taken without its quotes ("Mixed Case", "my.schema"). It returns the
// parts (one or two: [schema.]table), or ok false when name is not of that
// form. Unquoted parts are not folded: configured names are catalog names.
func SplitQualified(name string) (parts []string, ok bool) {
	for i := 0; ; {
		var part string
		switch {
		case i < len(name) && name[i] == '"':
			var b strings.Builder
			j := i + 1
			for {
				k := strings.IndexByte(name[j:], '"')
				if k < 0 {
					return nil, false
				}
				b.WriteString(name[j : j+k])
				j += k + 1
				if j < len(name) && name[j] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				break
			}
			part, i = b.String(), j
			if part == "" {
				return nil, false
			}
		default:
			j := i
			for j < len(name) && (name[j] == '_' || name[j] >= 'a' && name[j] <= 'z' || name[j] >= 'A' && name[j] <= 'Z' ||
				j > i && name[j] >= '0' && name[j] <= '9') {
				j++
			}
			if j == i {
				return nil, false
			}
			part, i = name[i:j], j
		}
		parts = append(parts, part)
		switch {
		case i == len(name):
			return parts, len(parts) <= 2
		case name[i] != '.' || len(parts) == 2:
			return nil, false
		}
		i++
	}
}
