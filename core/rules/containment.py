"""A rule from outside the project runs contained: whatever it does wrong stops it with one sentence
naming the rule and the drafts, and never a wrong number.

``contained(cls)`` is the class the registry holds for a user's rule (``core.rules.registry``): a
subclass that runs the user's programmes unchanged and checks each result.

- **It raises.**  An exception that is not one of the library's own refusals (``ExplorerError``)
  becomes ``RuleFailure``: "my_rule raised ZeroDivisionError (division by zero) on the drafts …".
- **A bad outcome.**  The accepted prefix s must be a node of the drafted tree, and the law of the
  extra token a distribution over the V tokens: finite, non-negative (round-off of −1e-12 allowed)
  and with positive mass.  A model-level programme (``model_output_law``, ``tree_output_law``) must
  give a law on outputs s·y of length 1..L+1 over V tokens whose masses are non-negative and sum to
  1 within ``LAW_TOL``.
- **Past its time.**  ``deadline(seconds)`` around a computation (the exact analysis, a Monte Carlo
  run, a court's instance) stops a rule that runs longer, even one caught in an endless loop of
  Python code: a timer thread raises ``RuleTimeout`` in the computing thread
  (``PyThreadState_SetAsyncExc``), which ``deadline`` turns into ``RuleFailure``.

Registered rules are this project's own, tested exactly; they run without these checks, which would
slow the exact laboratory.
"""
from __future__ import annotations

import ctypes
import math
import threading
from contextlib import contextmanager

import numpy as np

from core.data.outcome import Outcome
from core.data.token_tree import TokenTree
from core.errors import ExplorerError

#: Negative mass a residual may carry from round-off.
NEGATIVE_TOL = 1e-12
#: How far a model-level law's total may be from 1.
LAW_TOL = 1e-9


class RuleFailure(ExplorerError, RuntimeError):
    """A rule from outside the project raised, returned a bad outcome or ran past its time limit; the
    message is one sentence naming the rule and where."""


class RuleTimeout(BaseException):
    """Raised inside the computing thread when its deadline passes (a ``BaseException``, so that a
    rule's own ``except Exception`` does not swallow it)."""


def _drafts_text(tree: TokenTree) -> str:
    """The drafts a rule was given, short: K i.i.d. drafts as their rows, a tree as its draws."""
    if tree.iid_chains:
        return "the drafts " + ", ".join("".join(map(str, row)) or "∅" for row in tree.drafts.tolist())
    draws = "; ".join(f"{''.join(map(str, u)) or '∅'}→{','.join(map(str, xs))}" for u, xs in tree.draws.items())
    return f"the tree {tree.shape.label} drafted by {tree.law.name} ({draws})"


def outcome_problem(tree: TokenTree, out) -> str | None:
    """What is wrong with a rule's outcome on ``tree`` (a phrase), or None."""
    if not isinstance(out, Outcome):
        return f"returned {type(out).__name__}, not an Outcome"
    s = tuple(out.accepted)
    if s not in tree.q:
        return f"accepted {s}, which is not a node of the drafted tree"
    residual = np.asarray(out.residual)
    if residual.shape != (tree.V,):
        return f"returned a residual of shape {residual.shape}, not one probability per token (V = {tree.V})"
    if not np.all(np.isfinite(residual)):
        return "returned a residual that is not finite"
    if residual.min() < -NEGATIVE_TOL:
        return f"returned a residual with a negative entry ({residual.min():.3g})"
    if not residual.sum() > 0:
        return "returned a residual with no positive mass"
    return None


def law_problem(law, V: int, L: int) -> str | None:
    """What is wrong with a model-level output law {s·y: P(O = s·y)} (a phrase), or None."""
    if not isinstance(law, dict):
        return f"gave {type(law).__name__} as its output law, not a dict"
    total = 0.0
    for u, prob in law.items():
        if not (isinstance(u, tuple) and 1 <= len(u) <= L + 1 and all(0 <= int(x) < V for x in u)):
            return f"gave an output {u!r} that is no sequence of 1 to L + 1 = {L + 1} tokens below V = {V}"
        prob = float(prob)
        if not math.isfinite(prob) or prob < -NEGATIVE_TOL:
            return f"gave the output {u} the mass {prob:g}"
        total += prob
    if abs(total - 1.0) > LAW_TOL:
        return f"gave an output law of total mass {total:.12g}, not 1"
    return None


def _failure(name: str, exc: Exception, where: str) -> RuleFailure:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return RuleFailure(f"{name} raised {type(exc).__name__}{f' ({text})' if text else ''} on {where}")


def contained(cls: type) -> type:
    """A subclass of the rule class ``cls`` whose programmes are checked (module docstring); its
    ``name`` and every other attribute are ``cls``'s, and ``contained`` is True."""
    def checked(program: str):
        inner = getattr(cls, program)

        def run(self, tree: TokenTree, coins, *args, **kw) -> Outcome:
            try:
                out = inner(self, tree, coins, *args, **kw)
            except (ExplorerError, RuleTimeout):
                raise
            except Exception as exc:        # noqa: BLE001 - a user's rule may raise anything
                raise _failure(cls.name, exc, _drafts_text(tree)) from None
            problem = outcome_problem(tree, out)
            if problem:
                raise RuleFailure(f"{cls.name} {problem} on {_drafts_text(tree)}")
            return out
        run.__doc__ = inner.__doc__
        return run

    def model_law(program: str, where):
        inner = getattr(cls, program)

        def law(self, draft, target, *args, **kw):
            try:
                out = inner(self, draft, target, *args, **kw)
            except (ExplorerError, RuleTimeout):
                raise
            except Exception as exc:        # noqa: BLE001
                raise _failure(cls.name, exc, f"its {program} for {where(*args, **kw)}") from None
            L = args[1] if program == "model_output_law" else args[0].L
            problem = law_problem(out[0] if isinstance(out, tuple) else out, target.V, L)
            if problem:
                raise RuleFailure(f"{cls.name}'s {program} {problem}, for {where(*args, **kw)}")
            return out
        law.__doc__ = inner.__doc__
        return law

    attrs = {"run_chains": checked("run_chains"), "run_tree": checked("run_tree"), "contained": True,
             "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    if hasattr(cls, "model_output_law"):
        attrs["model_output_law"] = model_law("model_output_law", lambda K, L, *a, **k: f"K = {K}, L = {L}")
    if hasattr(cls, "tree_output_law"):
        attrs["tree_output_law"] = model_law("tree_output_law",
                                             lambda shape, law, *a, **k: f"{shape.label} drafted by {law.name}")
    return type(cls.__name__, (cls,), attrs)


def is_contained(rule) -> bool:
    """Whether a rule (class or instance) is a contained user rule."""
    return bool(getattr(rule, "contained", False))


@contextmanager
def deadline(seconds: float | None, rule: str, where: str):
    """Run the block, stopping it with ``RuleFailure`` ("``rule`` ran past its time limit of N s on
    ``where``") once ``seconds`` have passed; None (or ≤ 0) for no limit."""
    if not seconds or seconds <= 0:
        yield
        return
    ident = threading.get_ident()
    lock = threading.Lock()
    state = {"armed": True, "fired": False}

    def fire():
        with lock:
            if state["armed"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(RuleTimeout))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except RuleTimeout:
        raise RuleFailure(f"{rule} ran past its time limit of {seconds:g} s on {where}") from None
    finally:
        with lock:
            state["armed"] = False
            timer.cancel()
            if state["fired"]:
                # the exception may still be pending if it fired as the block finished: clear it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
