"""GRETA templates: a pattern as states (its variables) and transitions.

GRETA, Section 4.1 (Algorithm 1): every ``SEQ(Pi, Pj)`` adds the transition
end(Pi) -> start(Pj), every ``P+`` adds end(P) -> start(P). Section 5.1: a
negative sub-pattern ``NOT N`` gets a template of its own with a *previous*
connection (end of the positive item before it) and a *following* connection
(start of the positive item after it). A leading NOT has no previous, a
trailing NOT no following; both only occur in the outermost SEQ.

Because a type (and so a variable) appears once per pattern, a transition is
identified by its (source, target) pair; nested pluses such as ``(A+)+`` yield
the same pair twice and are merged, which does not change the set of trends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trendagg.language import ast


@dataclass(frozen=True)
class Transition:
    """``src -> dst`` between variables; ``negation`` indexes the NOT between them, if any."""

    src: str
    dst: str
    label: str  # "SEQ" or "+"
    negation: int | None = None


@dataclass(frozen=True)
class Negation:
    """A negative sub-pattern and its connections (GRETA, Section 5.1, Cases 1-3)."""

    template: Template
    previous: str | None
    following: str | None

    @property
    def kind(self) -> str:
        if self.previous is not None and self.following is not None:
            return "between"
        return "trailing" if self.following is None else "leading"


@dataclass(frozen=True)
class Template:
    """States (variables), start and end states, transitions and negative sub-patterns."""

    states: tuple[str, ...]
    types: tuple[str, ...]
    start: str
    end: str
    transitions: tuple[Transition, ...]
    negations: tuple[Negation, ...] = field(default=())

    def predecessors(self, var: str) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.dst == var)

    def all_templates(self) -> list[Template]:
        """This template and every nested negative template, depth first."""
        out = [self]
        for neg in self.negations:
            out.extend(neg.template.all_templates())
        return out

    def describe(self, indent: str = "") -> str:
        lines = [
            f"{indent}states: {', '.join(f'{v}:{t}' for v, t in zip(self.states, self.types, strict=True))}",
            f"{indent}start: {self.start}  end: {self.end}",
        ]
        for t in self.transitions:
            neg = f"  [NOT #{t.negation}]" if t.negation is not None else ""
            lines.append(f"{indent}  {t.src} -> {t.dst} ({t.label}){neg}")
        for i, n in enumerate(self.negations):
            lines.append(
                f"{indent}NOT #{i} ({n.kind}; previous={n.previous or '-'}, following={n.following or '-'}):"
            )
            lines.append(n.template.describe(indent + "    "))
        return "\n".join(lines)


def _positive_items(seq: ast.Seq) -> list[ast.Pattern]:
    return [p for p in seq.items if not isinstance(p, ast.Not)]


def start_var(p: ast.Pattern) -> str:
    """start(P) of GRETA Algorithm 1, as a variable."""
    if isinstance(p, ast.EventPattern):
        return p.var
    if isinstance(p, ast.Plus):
        return start_var(p.inner)
    if isinstance(p, ast.Seq):
        return start_var(_positive_items(p)[0])
    raise ValueError("a NOT has no start")


def end_var(p: ast.Pattern) -> str:
    """end(P) of GRETA Algorithm 1, as a variable."""
    if isinstance(p, ast.EventPattern):
        return p.var
    if isinstance(p, ast.Plus):
        return end_var(p.inner)
    if isinstance(p, ast.Seq):
        return end_var(_positive_items(p)[-1])
    raise ValueError("a NOT has no end")


def build_template(pattern: ast.Pattern) -> Template:
    """Translate a pattern (positive parts; NOTs become nested templates) into its template."""
    states: list[tuple[str, str]] = []
    transitions: dict[tuple[str, str], Transition] = {}
    negations: list[Negation] = []

    def add(t: Transition) -> None:
        key = (t.src, t.dst)
        old = transitions.get(key)
        if old is None or (old.negation is None and t.negation is not None):
            transitions[key] = t

    def walk(p: ast.Pattern) -> None:
        if isinstance(p, ast.EventPattern):
            states.append((p.var, p.type))
        elif isinstance(p, ast.Plus):
            walk(p.inner)
            add(Transition(end_var(p.inner), start_var(p.inner), "+"))
        elif isinstance(p, ast.Seq):
            items = list(p.items)
            for item in items:
                if not isinstance(item, ast.Not):
                    walk(item)
            previous: ast.Pattern | None = None
            pending: ast.Not | None = None
            for item in items:
                if isinstance(item, ast.Not):
                    pending = item
                    continue
                if previous is not None:
                    neg_index = None
                    if pending is not None:
                        neg_index = len(negations)
                        negations.append(
                            Negation(
                                build_template(pending.inner), end_var(previous), start_var(item)
                            )
                        )
                    add(Transition(end_var(previous), start_var(item), "SEQ", neg_index))
                elif pending is not None:  # leading NOT
                    negations.append(Negation(build_template(pending.inner), None, start_var(item)))
                pending = None
                previous = item
            if pending is not None and previous is not None:  # trailing NOT
                negations.append(Negation(build_template(pending.inner), end_var(previous), None))
        else:
            raise ValueError("NOT is only allowed as an item of SEQ")

    walk(pattern)
    return Template(
        states=tuple(v for v, _ in states),
        types=tuple(t for _, t in states),
        start=start_var(pattern),
        end=end_var(pattern),
        transitions=tuple(transitions.values()),
        negations=tuple(negations),
    )
