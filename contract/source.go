package contract

import (
	"crypto/sha256"
	"encoding/hex"
)

// Source answers the document the set was parsed from (nil for a nil set).
func (s *Set) Source() []byte {
	if s == nil {
		return nil
	}
	return s.source
}

// Digest answers the SHA-256 of the set's document in hex, "" for a nil
// set: two processes enforce the same contracts when their digests match.
func (s *Set) Digest() string {
	if s == nil {
		return ""
	}
	sum := sha256.Sum256(s.source)
	return hex.EncodeToString(sum[:])
}
