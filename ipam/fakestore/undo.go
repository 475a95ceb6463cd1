package fakestore

// undo is a commit's journal: how to put back every map entry the commit changed, so a
// refused commit leaves nothing behind without copying the whole state.
type undo []func()

// set sets m[k] = v, journaling the old entry.
func set[K comparable, V any](u *undo, m map[K]V, k K, v V) {
	save(u, m, k)
	m[k] = v
}

// del deletes m[k], journaling the old entry.
func del[K comparable, V any](u *undo, m map[K]V, k K) {
	if _, ok := m[k]; ok {
		save(u, m, k)
		delete(m, k)
	}
}

func save[K comparable, V any](u *undo, m map[K]V, k K) {
	old, had := m[k]
	*u = append(*u, func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// rollback puts back, newest first, what the journal recorded.
func (u undo) rollback() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}
