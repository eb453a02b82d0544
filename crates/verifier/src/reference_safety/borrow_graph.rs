//! A borrow graph: which references borrow from which, along which paths
//! (locals, globals, fields). The semantics follow Move's borrow graph:
//! strong edges are exact paths, weak edges cover every extension of their
//! path, and an edge set that grows past [`MAX_EDGE_SET_SIZE`] collapses to
//! one weak, empty-path edge so joins always converge.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RefId(pub usize);

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Label {
    Local(u8),
    Global(u16),
    Field(u16),
    /// Sui: (enum definition, variant, field).
    VariantField(u16, u16, u16),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    strong: bool,
    path: Vec<Label>,
}

impl Edge {
    /// Whether `self` is at least as general as `other`.
    fn leq(&self, other: &Edge) -> bool {
        self == other || (!self.strong && is_prefix(&self.path, &other.path))
    }
}

fn is_prefix(a: &[Label], b: &[Label]) -> bool {
    a.len() <= b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

pub(crate) const MAX_EDGE_SET_SIZE: usize = 10;

#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct EdgeSet {
    edges: BTreeSet<Edge>,
    overflown: bool,
}

impl EdgeSet {
    fn insert(&mut self, e: Edge) {
        if self.overflown {
            return;
        }
        if self.edges.len() + 1 > MAX_EDGE_SET_SIZE {
            self.edges = BTreeSet::from([Edge { strong: false, path: vec![] }]);
            self.overflown = true;
        } else {
            self.edges.insert(e);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Ref {
    borrowed_by: BTreeMap<RefId, EdgeSet>,
    borrows_from: BTreeSet<RefId>,
    mutable: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct BorrowGraph(BTreeMap<RefId, Ref>);

impl BorrowGraph {
    pub fn graph_size(&self) -> usize {
        self.0.values().map(|r| 1 + r.borrowed_by.values().map(|e| e.edges.len()).sum::<usize>()).sum()
    }

    pub fn is_mutable(&self, id: RefId) -> bool {
        self.0.get(&id).is_some_and(|r| r.mutable)
    }

    pub fn new_ref(&mut self, id: RefId, mutable: bool) {
        self.0.insert(id, Ref { borrowed_by: BTreeMap::new(), borrows_from: BTreeSet::new(), mutable });
    }

    pub fn add_strong_borrow(&mut self, parent: RefId, child: RefId) {
        self.factor(parent, vec![], child)
    }
    pub fn add_strong_field_borrow(&mut self, parent: RefId, l: Label, child: RefId) {
        self.factor(parent, vec![l], child)
    }
    pub fn add_weak_borrow(&mut self, parent: RefId, child: RefId) {
        self.add_edge(parent, Edge { strong: false, path: vec![] }, child)
    }
    pub fn add_weak_field_borrow(&mut self, parent: RefId, l: Label, child: RefId) {
        self.add_edge(parent, Edge { strong: false, path: vec![l] }, child)
    }

    fn add_edge(&mut self, parent: RefId, e: Edge, child: RefId) {
        if parent == child || !self.0.contains_key(&child) {
            return;
        }
        let Some(p) = self.0.get_mut(&parent) else { return };
        p.borrowed_by.entry(child).or_default().insert(e);
        if let Some(c) = self.0.get_mut(&child) {
            c.borrows_from.insert(parent);
        }
    }

    /// Adds `parent -path-> mid` (strong), moving every existing edge of
    /// `parent` that extends `path` to hang off `mid` instead.
    fn factor(&mut self, parent: RefId, path: Vec<Label>, mid: RefId) {
        let Some(p) = self.0.get_mut(&parent) else { return };
        let mut moved = vec![];
        for (child, set) in &p.borrowed_by {
            for e in &set.edges {
                if is_prefix(&path, &e.path) {
                    moved.push((*child, e.clone()));
                }
            }
        }
        let mut emptied = vec![];
        for (child, e) in &moved {
            if let Some(set) = p.borrowed_by.get_mut(child) {
                set.edges.remove(e);
                if set.edges.is_empty() {
                    p.borrowed_by.remove(child);
                    emptied.push(*child);
                }
            }
        }
        for c in emptied {
            if let Some(c) = self.0.get_mut(&c) {
                c.borrows_from.remove(&parent);
            }
        }
        for (child, e) in moved {
            let suffix = e.path[path.len()..].to_vec();
            self.add_edge(mid, Edge { strong: e.strong, path: suffix }, child);
        }
        self.add_edge(parent, Edge { strong: true, path }, mid);
    }

    /// Removes `id`, connecting its parents directly to its children.
    pub fn release(&mut self, id: RefId) {
        let Some(r) = self.0.remove(&id) else { return };
        for parent in &r.borrows_from {
            let parent_edges = match self.0.get_mut(parent) {
                Some(p) => p.borrowed_by.remove(&id),
                None => None,
            };
            for pe in parent_edges.iter().flat_map(|s| s.edges.iter()) {
                for (child, ces) in &r.borrowed_by {
                    for ce in &ces.edges {
                        if parent == child {
                            continue;
                        }
                        let path = if pe.strong {
                            let mut p = pe.path.clone();
                            p.extend(ce.path.iter().cloned());
                            p
                        } else {
                            pe.path.clone()
                        };
                        self.add_edge(*parent, Edge { strong: pe.strong && ce.strong, path }, *child);
                    }
                }
            }
        }
        for child in r.borrowed_by.keys() {
            if let Some(c) = self.0.get_mut(child) {
                c.borrows_from.remove(&id);
            }
        }
    }

    /// Edges of `other` not covered by an edge of `self`.
    fn unmatched(&self, other: &Self) -> Vec<(RefId, RefId, Edge)> {
        let mut out = vec![];
        for (pid, oref) in &other.0 {
            let sref = self.0.get(pid);
            for (cid, oset) in &oref.borrowed_by {
                for oe in &oset.edges {
                    let found = sref
                        .and_then(|s| s.borrowed_by.get(cid))
                        .is_some_and(|ss| ss.edges.iter().any(|se| se.leq(oe)));
                    if !found {
                        out.push((*pid, *cid, oe.clone()));
                    }
                }
            }
        }
        out
    }

    pub fn leq(&self, other: &Self) -> bool {
        self.unmatched(other).is_empty()
    }

    pub fn join(&self, other: &Self) -> Self {
        let mut j = self.clone();
        for (p, c, e) in self.unmatched(other) {
            j.add_edge(p, e, c);
        }
        j
    }

    pub fn remap(&mut self, map: &BTreeMap<RefId, RefId>) {
        let m = |id: RefId| map.get(&id).copied().unwrap_or(id);
        self.0 = std::mem::take(&mut self.0)
            .into_iter()
            .map(|(id, mut r)| {
                r.borrowed_by = std::mem::take(&mut r.borrowed_by).into_iter().map(|(k, v)| (m(k), v)).collect();
                r.borrows_from = std::mem::take(&mut r.borrows_from).into_iter().map(m).collect();
                (m(id), r)
            })
            .collect();
    }

    /// (borrower, first label) of every edge out of `id`; None = full borrow.
    fn borrowers(&self, id: RefId) -> impl Iterator<Item = (RefId, Option<&Label>)> + '_ {
        self.0
            .get(&id)
            .into_iter()
            .flat_map(|r| r.borrowed_by.iter().flat_map(|(c, set)| set.edges.iter().map(move |e| (*c, e.path.first()))))
    }

    pub fn has_full_borrows(&self, id: RefId) -> bool {
        self.borrowers(id).any(|(_, l)| l.is_none())
    }

    pub fn has_consistent_borrows(&self, id: RefId, label: Option<&Label>) -> bool {
        self.borrowers(id).any(|(_, l)| match (l, label) {
            (None, _) | (Some(_), None) => true,
            (Some(a), Some(b)) => a == b,
        })
    }

    pub fn has_consistent_mutable_borrows(&self, id: RefId, label: Option<&Label>) -> bool {
        self.borrowers(id).any(|(c, l)| {
            self.is_mutable(c)
                && match (l, label) {
                    (None, _) | (Some(_), None) => true,
                    (Some(a), Some(b)) => a == b,
                }
        })
    }

    pub fn is_writable(&self, id: RefId) -> bool {
        !self.has_consistent_borrows(id, None)
    }
    pub fn is_freezable(&self, id: RefId, at: Option<&Label>) -> bool {
        !self.has_consistent_mutable_borrows(id, at)
    }
    pub fn is_readable(&self, id: RefId, at: Option<&Label>) -> bool {
        !self.is_mutable(id) || self.is_freezable(id, at)
    }
}
