package queue

import "container/heap"

// podHeap is a priority queue of pods that can also find, update and
// remove a pod by key. Not safe for concurrent use.
type podHeap struct {
	items []*QueuedPodInfo
	index map[string]int
	less  func(a, b *QueuedPodInfo) bool
}

func newPodHeap(less func(a, b *QueuedPodInfo) bool) *podHeap {
	return &podHeap{index: map[string]int{}, less: less}
}

// heap.Interface, for container/heap only.
func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].key] = i
	h.index[h.items[j].key] = j
}
func (h *podHeap) Push(x any) {
	pi := x.(*QueuedPodInfo)
	h.index[pi.key] = len(h.items)
	h.items = append(h.items, pi)
}
func (h *podHeap) Pop() any {
	last := len(h.items) - 1
	pi := h.items[last]
	h.items[last] = nil
	h.items = h.items[:last]
	delete(h.index, pi.key)
	return pi
}

// addOrUpdate inserts pi, or replaces and reorders the entry with its key.
func (h *podHeap) addOrUpdate(pi *QueuedPodInfo) {
	if i, ok := h.index[pi.key]; ok {
		h.items[i] = pi
		heap.Fix(h, i)
		return
	}
	heap.Push(h, pi)
}

// remove deletes the entry with key and reports whether there was one.
func (h *podHeap) remove(key string) bool {
	i, ok := h.index[key]
	if ok {
		heap.Remove(h, i)
	}
	return ok
}

func (h *podHeap) get(key string) (*QueuedPodInfo, bool) {
	i, ok := h.index[key]
	if !ok {
		return nil, false
	}
	return h.items[i], true
}

func (h *podHeap) peek() (*QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	return h.items[0], true
}

func (h *podHeap) pop() (*QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	return heap.Pop(h).(*QueuedPodInfo), true
}
