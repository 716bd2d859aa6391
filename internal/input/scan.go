package input

// CheckStored checks JSON a Go caller encoded (encoding/json writes valid
// UTF-8 and finite numbers) for what databases refuse: nesting deeper than
// MaxJSONDepth and the NUL character (\u0000). One pass over the bytes, no
// decoding: it runs on every insert.
func CheckStored(field string, b []byte) error {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				if i+5 < len(b) && b[i+1] == 'u' && string(b[i+2:i+6]) == "0000" {
					return invalid(field, `must not contain the NUL character (\u0000)`)
				}
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxJSONDepth+1 {
				return invalid(field, "is nested deeper than %d levels", MaxJSONDepth)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
