"""A researcher's own rule, loaded from their module or file: the rule specification, the loading and
the checks that refuse a rule in one sentence (the registry registers what passes:
``core.rules.registry.load_rule``).

A specification names a ``Verifier`` subclass: ``MODULE:CLASS`` (an importable module, e.g.
``my_rules.fast:MyRule``) or ``PATH.py:CLASS`` (a file anywhere, e.g. ``~/rules/my_rule.py:MyRule``).
The command line takes it as ``--rule SPEC`` (repeatable); the environment variable
``EXPLORER_RULES=SPEC[,SPEC...]`` gives the same to the library, the command line, the app and the
Dask workers of a sweep.  What a rule class must carry is ``metadata_problems``'s list; docs/your_rule.md
is the contract.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from core.errors import ExplorerError
from core.rules.base import Verifier

#: The environment variable naming rules to load: specifications separated by commas.
RULES_ENV = "EXPLORER_RULES"
#: Whether the app offers to paste a rule's code (off unless "1": a hosted app never runs a
#: visitor's code; docs/app.md, "Hosting").
ALLOW_CODE_ENV = "EXPLORER_ALLOW_CODE"
#: The prefix of the module name a rule file is imported under (``SPEC.module``).
FILE_MODULE_PREFIX = "explorer_rule_"

#: The metadata every rule sets: texts, and the flags the analysis and the pages read.
TEXT = ("name", "short", "label", "color", "summary", "source")
FLAGS = ("single_draft", "order_invariant", "lossless_by_theory", "needs_models", "closed_form_tau")
#: What a rule from outside the project need not set: the pages draw it in a colour of their own
#: (``pages/ui/figures/style.py``'s reserve), so that it never looks like a registered rule.
USER_OPTIONAL = ("color",)
#: A rule's name: what the command line, a link and a results file write (no separators).
NAME = re.compile(r"[a-z][a-z0-9_]*")
HEX = re.compile(r"#[0-9a-f]{6}")
SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")   # a full stop followed by a capital starts a new sentence
#: The teaching texts the step page shows above each kind of replay (``Verifier.walk``): ``how`` on K
#: i.i.d. chains, ``how_on_trees`` on a token tree (a "rounds" replay is always its token tree's).
TEACHING = {"tests": ("how",), "block": ("how",), "leaf-to-root": ("how", "how_on_trees"), "rounds": ("how_on_trees",)}


class RuleLoadError(ExplorerError, ValueError):
    """A rule specification cannot be loaded or its class is refused; one sentence naming why."""


@dataclass(frozen=True)
class RuleSpec:
    """Where a rule comes from: the specification as written, the module it is imported as (a file's
    module is ``FILE_MODULE_PREFIX`` + its stem + a digest of its path), the class's name, and the
    file for ``PATH.py:CLASS``."""
    text: str
    module: str
    cls_name: str
    path: Path | None = None

    @classmethod
    def parse(cls, text: str) -> "RuleSpec":
        """``MODULE:CLASS`` or ``PATH.py:CLASS``, or ``RuleLoadError``."""
        text = text.strip()
        where, sep, name = text.rpartition(":")
        if not sep or not where or not name.isidentifier():
            raise RuleLoadError(f"rule {text!r} is not MODULE:CLASS or PATH.py:CLASS")
        if where.endswith(".py") or "/" in where or "\\" in where:
            path = Path(where).expanduser().resolve()
            digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
            stem = re.sub(r"\W", "_", path.stem)
            return cls(text, f"{FILE_MODULE_PREFIX}{stem}_{digest}", name, path)
        if not all(part.isidentifier() for part in where.split(".")):
            raise RuleLoadError(f"rule {text!r}: {where!r} is no module name nor a .py file")
        return cls(text, where, name)

    def load(self) -> type:
        """The class, its module imported (a file's as ``module``), or ``RuleLoadError``."""
        try:
            if self.path is not None:
                if not self.path.is_file():
                    raise RuleLoadError(f"rule {self.text!r}: the file {self.path} does not exist")
                module = sys.modules.get(self.module)
                if module is None or getattr(module, "__file__", None) != str(self.path):
                    spec = importlib.util.spec_from_file_location(self.module, self.path)
                    module = importlib.util.module_from_spec(spec)
                    sys.modules[self.module] = module       # pickling and dataclasses look it up
                    try:
                        spec.loader.exec_module(module)
                    except BaseException:
                        del sys.modules[self.module]
                        raise
            else:
                module = importlib.import_module(self.module)
        except RuleLoadError:
            raise
        except Exception as exc:        # noqa: BLE001 - a user's module may raise anything on import
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise RuleLoadError(f"rule {self.text!r}: its module does not import "
                                f"({type(exc).__name__}{': ' + first if first else ''})") from None
        cls = getattr(module, self.cls_name, None)
        if cls is None:
            raise RuleLoadError(f"rule {self.text!r}: the module has no {self.cls_name}")
        if not (isinstance(cls, type) and issubclass(cls, Verifier)):
            raise RuleLoadError(f"rule {self.text!r}: {self.cls_name} is not a subclass of "
                                f"core.rules.base.Verifier")
        return cls

    def files(self) -> dict[str, bytes]:
        """The sources a worker needs to import the rule (paths relative to an import root): a
        file's own source under its module's name, a module's file, or every ``.py`` file of the
        package a module belongs to (its top-level package), so that its own imports resolve; pasted
        code (``pasted``) under its module's name."""
        if self.path is not None:
            return {f"{self.module}.py": self.path.read_bytes()}
        top = self.module.partition(".")[0]
        module = importlib.import_module(top)
        if hasattr(module, PASTED_SOURCE):
            return {f"{top}.py": getattr(module, PASTED_SOURCE).encode()}
        origin = Path(module.__file__)
        if origin.name != "__init__.py":
            return {origin.name: origin.read_bytes()}
        root = origin.parent
        return {path.relative_to(root.parent).as_posix(): path.read_bytes()
                for path in sorted(root.rglob("*.py"))}

    @property
    def top(self) -> str:
        """The top-level module a worker imports it under."""
        return self.module.partition(".")[0]


#: The attribute holding a pasted module's source (``pasted``), which travels to Dask workers.
PASTED_SOURCE = "__explorer_source__"
PASTED_PREFIX = "explorer_pasted_"


def pasted(code: str, cls_name: str) -> str:
    """Run pasted ``code`` as a module of its own (named after its digest; nothing is written) and
    return the specification ``MODULE:CLASS`` of its class ``cls_name``.  It runs the code: only the
    app's owner may allow it (``ALLOW_CODE_ENV``); a module that raises is refused in one sentence."""
    if not cls_name.isidentifier():
        raise RuleLoadError(f"the class name {cls_name!r} is not a Python identifier")
    name = PASTED_PREFIX + hashlib.sha256(code.encode()).hexdigest()[:12]
    if name not in sys.modules:
        module = type(sys)(name)
        setattr(module, PASTED_SOURCE, code)
        try:
            exec(compile(code, f"<pasted rule {cls_name}>", "exec"), module.__dict__)   # noqa: S102 - allowed by the owner
        except Exception as exc:        # noqa: BLE001 - pasted code may raise anything
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise RuleLoadError(f"the pasted code does not run ({type(exc).__name__}"
                                f"{': ' + first if first else ''})") from None
        sys.modules[name] = module
    return f"{name}:{cls_name}"


def specs_of(text: str) -> list[str]:
    """The specifications in ``EXPLORER_RULES``'s value (comma-separated; blanks ignored)."""
    return [t.strip() for t in text.split(",") if t.strip()]


def metadata_problems(cls: type, user: bool = False, untaught: frozenset[str] = frozenset()) -> list[str]:
    """Everything wrong with a rule class's metadata, one phrase each (empty when complete).

    Every rule sets ``TEXT`` and ``FLAGS``; a colour is ``#rrggbb``; the label does not repeat the
    short name; the summary is one sentence.  A registered rule (``user`` False) also has the step
    page's teaching text for its walk (``TEACHING``) unless its name is in ``untaught``; a rule from
    outside (``user``) may leave out ``USER_OPTIONAL`` and the teaching text, and must have a name
    the command line and a link can write (``NAME``) and its own ``run_chains``."""
    problems = []
    required = [a for a in TEXT + FLAGS if not (user and a in USER_OPTIONAL)]
    for attr in required:
        if not hasattr(cls, attr):
            problems.append(f"{attr} is not set")
    for attr in TEXT:
        value = getattr(cls, attr, None)
        if hasattr(cls, attr) and not (isinstance(value, str) and value.strip()):
            problems.append(f"{attr} = {value!r} is not a non-empty string")
    for attr in FLAGS:
        if hasattr(cls, attr) and not isinstance(getattr(cls, attr), bool):
            problems.append(f"{attr} = {getattr(cls, attr)!r} is not a bool")
    if problems:
        return problems
    if hasattr(cls, "color") and not HEX.fullmatch(cls.color):
        problems.append(f"color {cls.color!r} is not #rrggbb")
    if cls.short in cls.label:
        problems.append(f"label {cls.label!r} repeats the short name {cls.short!r}")
    summary = cls.summary
    if "\n" in summary or not summary.endswith(".") or SENTENCE_BREAK.search(summary):
        problems.append(f"summary {summary!r} is not one sentence ending with a period")
    if user:
        if not NAME.fullmatch(cls.name):
            problems.append(f"name {cls.name!r} is not lower-case letters, digits and _ (starting with a letter)")
        if cls.run_chains is Verifier.run_chains:
            problems.append("run_chains is not implemented")
        if cls.token_trees and cls.run_tree is Verifier.run_tree:
            problems.append("token_trees is True but run_tree is not implemented")
        return problems
    for attr in TEACHING.get(cls.walk, ()):
        taught = getattr(cls, attr).startswith("**How ")
        if taught == (cls.name in untaught):
            problems.append(f"{attr} = {getattr(cls, attr)[:40]!r} is not the step page's teaching text"
                            if not taught else f"{attr} is set but {cls.name} is listed as untaught")
    return problems
