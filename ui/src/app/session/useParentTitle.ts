import { useEffect, useState } from "react";
import { useServices } from "../context";

/** The title of the session this one was forked from or delegated by, when the caller does not know it. */
export function useParentTitle(parentId: string | null, knownTitle: (id: string) => string | undefined) {
  const { api } = useServices();
  const [fetchedParent, setFetchedParent] = useState<{ id: string; title: string } | null>(null);
  useEffect(() => {
    if (!parentId || knownTitle(parentId)) return;
    let alive = true;
    api
      .session(parentId)
      .then((d) => alive && setFetchedParent({ id: parentId, title: d.session.title || d.session.slug }))
      .catch(() => undefined);
    return () => {
      alive = false;
    };
  }, [api, parentId, knownTitle]);
  return fetchedParent;
}
