"""Schema and property checks of a query's shape against the introspected schema (no database call).

`schema_problems` finds unknown labels, unknown relationship types and relationship
patterns the schema does not have (including a wrong direction, naming the valid one);
`property_problems` finds property keys the variable's label (or relationship type)
does not have. Both return `None` when they find nothing, else (message, details); the
details carry the closest valid names for the feedback.
"""

from __future__ import annotations

from typing import Any

from t2c_lib.schema import GraphSchema, RelPattern
from t2c_lib.validation.names import NameSet, quote_list
from t2c_lib.validation.patterns import QueryShape, RelUse

Problem = tuple[str, dict[str, Any]]


def schema_problems(shape: QueryShape, schema: GraphSchema, case_sensitive: bool) -> Problem | None:
    """Unknown labels / types and impossible relationship patterns, or None."""
    labels = NameSet(schema.labels, case_sensitive)
    types = NameSet(schema.rel_types, case_sensitive)
    messages: list[str] = []
    suggestions: dict[str, list[str]] = {}
    unknown_labels = [name for name in shape.labels if name not in labels]
    unknown_types = [name for name in shape.rel_types if name not in types]
    for name in unknown_labels:
        close = labels.closest(name)
        suggestions[name] = close
        messages.append(f"label `{name}` does not exist" + (f"; did you mean {quote_list(close)}?" if close else ""))
    for name in unknown_types:
        close = types.closest(name)
        suggestions[name] = close
        messages.append(
            f"relationship type `{name}` does not exist" + (f"; did you mean {quote_list(close)}?" if close else "")
        )
    bad_edges: list[dict[str, Any]] = []
    if not unknown_labels and not unknown_types:
        for rel in shape.rels:
            edge = _edge_problem(rel, shape, schema, labels, types)
            if edge is not None and edge["pattern"] not in {e["pattern"] for e in bad_edges}:
                bad_edges.append(edge)
                messages.append(edge["message"])
    if not messages:
        return None
    details = {
        "unknown_labels": unknown_labels,
        "unknown_types": unknown_types,
        "bad_edges": bad_edges,
        "suggestions": suggestions,
        "labels_used": [labels.canonical(n) or n for n in shape.labels],
        "types_used": [types.canonical(n) or n for n in shape.rel_types],
    }
    return "; ".join(messages), details


def _endpoint_labels(node_labels: tuple[str, ...], var: str, shape: QueryShape, labels: NameSet) -> set[str]:
    """Canonical labels of a pattern endpoint, from the pattern itself or from the variable's binding."""
    names = set(node_labels) or (shape.node_labels(var) if var else set())
    return {labels.canonical(n) or n for n in names}


def _edge_problem(
    rel: RelUse, shape: QueryShape, schema: GraphSchema, labels: NameSet, types: NameSet
) -> dict[str, Any] | None:
    """A relationship pattern the schema cannot match, with the valid alternatives."""
    left = _endpoint_labels(rel.left.labels, rel.left.var, shape, labels)
    right = _endpoint_labels(rel.right.labels, rel.right.var, shape, labels)
    rel_types = {types.canonical(t) or t for t in rel.types}
    if rel.var_length and (left and right):
        # Intermediate nodes make the endpoints of a variable-length path arbitrary: check types only.
        return None
    if not left and not right:
        return None
    candidates = [p for p in schema.patterns if not rel_types or p.type in rel_types]

    def fits(p: RelPattern, src: set[str], dst: set[str]) -> bool:
        return (not src or p.source in src) and (not dst or p.target in dst)

    forward = [p for p in candidates if fits(p, left, right)]
    backward = [p for p in candidates if fits(p, right, left)]
    if rel.direction == "->" and forward or rel.direction == "<-" and backward:
        return None
    if rel.direction == "--" and (forward or backward):
        return None
    written = _render_use(rel, left, right)
    if rel.direction != "--" and (backward if rel.direction == "->" else forward):
        valid = sorted({p.render() for p in (backward if rel.direction == "->" else forward)})
        return {
            "pattern": written,
            "valid": valid,
            "reversed": True,
            "message": f"{written} has the wrong direction; the schema has {', '.join(valid)}",
        }
    related = sorted({p.render() for p in candidates if p.source in left | right or p.target in left | right})
    if not related:
        related = sorted({p.render() for p in candidates})
    type_text = "|".join(sorted(rel_types)) if rel_types else "any type"
    between = " and ".join(f"`{'|'.join(sorted(s))}`" for s in (left, right) if s)
    message = f"{written}: no relationship of {type_text} connects {between} in the schema"
    if related:
        message += f"; valid patterns: {', '.join(related[:8])}"
    return {"pattern": written, "valid": related, "reversed": False, "message": message}


def _render_use(rel: RelUse, left: set[str], right: set[str]) -> str:
    def node(labels: set[str]) -> str:
        return f"(:{'|'.join(sorted(labels))})" if labels else "()"

    types = ":" + "|".join(rel.types) if rel.types else ""
    body = f"-[{types}]-"
    if rel.direction == "->":
        body += ">"
    elif rel.direction == "<-":
        body = "<" + body
    return f"{node(left)}{body}{node(right)}"


def property_problems(shape: QueryShape, schema: GraphSchema, case_sensitive: bool) -> Problem | None:
    """Property keys that the labels (or types) bound to a variable do not have, or None."""
    labels = NameSet(schema.labels, case_sensitive)
    types = NameSet(schema.rel_types, case_sensitive)
    wrong: list[dict[str, Any]] = []
    seen: set[tuple[tuple[str, ...], str]] = set()

    def check(var: str, owners: set[str], key: str, is_rel: bool) -> None:
        known = NameSet(schema.rel_types if is_rel else schema.labels, case_sensitive)
        found = {known.canonical(o) for o in owners}
        if not owners or None in found:
            return  # unlabelled variable, or an unknown label the schema step reports
        canon = {o for o in found if o is not None}
        props = NameSet({p for o in canon for p in schema.properties_of(o)}, case_sensitive)
        if key in props or (tuple(sorted(canon)), key) in seen:
            return
        seen.add((tuple(sorted(canon)), key))
        elsewhere = sorted(
            o
            for o in (schema.rel_types if is_rel else schema.labels)
            if key in NameSet(schema.properties_of(o), case_sensitive)
        )
        wrong.append(
            {
                "variable": var,
                "owners": sorted(canon),
                "property": key,
                "relationship": is_rel,
                "closest": props.closest(key),
                "valid": props.names,
                "elsewhere": elsewhere,
            }
        )

    for node in shape.nodes:
        for key in node.keys:
            check(node.var, set(node.labels) or (shape.node_labels(node.var) if node.var else set()), key, False)
    for rel in shape.rels:
        for key in rel.keys:
            check(rel.var, set(rel.types) or (shape.rel_types_of(rel.var) if rel.var else set()), key, True)
    for use in shape.properties:
        if shape.is_rel_var(use.var) and not shape.is_node_var(use.var):
            check(use.var, shape.rel_types_of(use.var), use.key, True)
        elif shape.is_node_var(use.var):
            check(use.var, shape.node_labels(use.var), use.key, False)
    if not wrong:
        return None
    messages = []
    for w in wrong:
        owner = "|".join(w["owners"])
        kind = "relationship type" if w["relationship"] else "label"
        text = f"{kind} `{owner}` has no property `{w['property']}` (used as `{w['variable'] or '_'}.{w['property']}`)"
        if w["closest"]:
            text += f"; did you mean {quote_list(w['closest'])}?"
        elif w["elsewhere"]:
            text += f"; `{w['property']}` belongs to {quote_list(w['elsewhere'])}"
        messages.append(text)
    owners_used = sorted({o for w in wrong for o in w["owners"]} | {labels.canonical(n) or n for n in shape.labels})
    details = {
        "unknown_properties": wrong,
        "suggestions": {w["property"]: w["closest"] for w in wrong},
        "labels_used": [o for o in owners_used if o in labels],
        "types_used": [types.canonical(n) or n for n in shape.rel_types],
    }
    return "; ".join(messages), details
