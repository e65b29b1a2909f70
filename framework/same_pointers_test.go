package framework

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

func TestSamePointersComparesEveryPosition(t *testing.T) {
	t.Parallel()
	f := &Framework{parallelism: 4}
	other := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	for _, n := range []int{0, 3, 1 << 14, 5 << 14} {
		list := make([]*nodeinfo.NodeInfo, n)
		for i := range list {
			list[i] = nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i)}})
		}
		cases := []struct {
			name   string
			change func([]*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo
			want   bool
		}{
			{"a copy holds the same pointers", func(l []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo { return l }, true},
			{"a list one longer differs", func(l []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo { return append(l, other) }, false},
		}
		if n > 0 {
			for _, at := range []int{0, n / 2, n - 1} {
				cases = append(cases, struct {
					name   string
					change func([]*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo
					want   bool
				}{fmt.Sprintf("a pointer replaced at %d differs", at), func(l []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo { l[at] = other; return l }, false})
			}
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d nodes: %s", n, tc.name), func(t *testing.T) {
				changed := tc.change(slices.Clone(list))
				if got := f.samePointers(list, changed); got != tc.want {
					t.Errorf("samePointers = %v, want %v", got, tc.want)
				}
			})
		}
	}
}
