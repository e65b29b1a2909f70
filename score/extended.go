package score

import (
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/noderesources"
)

// scoresExtended reports whether s scores an extended resource.
func scoresExtended(s *noderesources.Scorer) bool {
	for _, r := range s.Resources() {
		if dra.IsExtendedResourceName(r.Name) {
			return true
		}
	}
	return false
}
