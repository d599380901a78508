//! The fork hierarchy of a project's sessions (spec 020), as plain data.

use std::collections::HashMap;

use mia_protocol::SessionId;

use crate::sessions::SessionListItem;

/// A session and the sessions forked from it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TreeNode {
    #[serde(flatten)]
    pub item: SessionListItem,
    pub children: Vec<TreeNode>,
}

/// Arrange sessions into trees by `parent_id`. Roots are sessions without a
/// parent or whose parent is not in `items`; siblings are in creation order.
pub fn build_tree(items: Vec<SessionListItem>) -> Vec<TreeNode> {
    let present: std::collections::HashSet<SessionId> =
        items.iter().map(|i| i.session.id).collect();
    let mut children: HashMap<SessionId, Vec<SessionListItem>> = HashMap::new();
    let mut roots = Vec::new();
    for item in items {
        match item.session.parent_id {
            Some(parent) if present.contains(&parent) && parent != item.session.id => {
                children.entry(parent).or_default().push(item);
            }
            _ => roots.push(item),
        }
    }
    fn attach(
        item: SessionListItem,
        children: &mut HashMap<SessionId, Vec<SessionListItem>>,
        depth: usize,
    ) -> TreeNode {
        let mut kids = children.remove(&item.session.id).unwrap_or_default();
        kids.sort_by_key(|k| (k.session.created_at, k.session.id));
        let kids = if depth > 256 {
            Vec::new()
        } else {
            kids.into_iter()
                .map(|k| attach(k, children, depth + 1))
                .collect()
        };
        TreeNode {
            item,
            children: kids,
        }
    }
    roots.sort_by_key(|r| (r.session.created_at, r.session.id));
    roots
        .into_iter()
        .map(|r| attach(r, &mut children, 0))
        .collect()
}
