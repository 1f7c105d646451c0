"""The release gate from any machine: asks the API whether a system passes its set's release
criteria and exits 0 (pass), 1 (fail), 2 (provisional) or 3 (usage, connection or server
error, or any crash), printing the reasons. Standard library only: no Django needed where CI
runs it.

    python3 audit/gate.py --url https://citeaudit.example.org --token "$CITEAUDIT_TOKEN" \\
        --set "Nightly eval" --system rag-v42

Also `python -m audit.gate` from a checkout and `citeaudit-gate` from an installed package.
"""
# ruff: noqa: E402 - the import path is mended before the standard library's network modules load.

from __future__ import annotations

import os
import sys

PASS, FAIL, PROVISIONAL, ERROR = 0, 1, 2, 3

if __name__ == "__main__":
    # Run as `python3 audit/gate.py`, Python puts audit/ first on the import path, where
    # audit/selectors/ would stand in for the standard library's `selectors` (which sockets
    # import): the gate needs nothing from its own folder, so the folder goes.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

    def _crash(kind, value, tb) -> None:
        # An uncaught exception exits 1, which CI reads as "fail": a crash is an error (3).
        sys.__excepthook__(kind, value, tb)
        sys.stderr.flush()
        os._exit(ERROR)

    sys.excepthook = _crash

import argparse
import json
import traceback
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

EXIT_CODES = {"pass": PASS, "fail": FAIL, "provisional": PROVISIONAL}


class GateError(Exception):
    """Anything that keeps the gate from an answer: exit code 3."""


def _claim_label(claim: dict) -> str:
    """The claim's name ("refund-a1 claim 1") beside its id; servers before names had only
    the answer's id."""
    if claim.get("name"):
        return f"{claim['name']} (id {claim['id']})"
    return f"claim {claim['id']} of answer {claim['answer_external_id']}"


def describe(decision: dict[str, Any]) -> str:
    """The decision as lines for a CI log: the verdict, any change of the criteria made
    after review started (who, when, why), each criterion's result with the claims failing
    it, and the criteria version decided on. Shared with `manage.py gate`."""
    lines = [f"{decision['system']}: {decision['decision'].upper()}"]
    for change in decision.get("criteria_changes_after_review_started") or ():
        lines.append(
            f"  CRITERIA CHANGED AFTER REVIEW STARTED: version {change['version']} "
            f"by {change['by'] or '(unknown)'} at {_when(change['at'])}: {change['reason']}"
        )
    judge = decision.get("judge")
    if judge:
        lines.append(
            f"  with accepted judge {judge['name']} v{judge['version']} ({judge['model']}, "
            f"kappa {judge['kappa']:.2f} on {judge['gold_claims']} gold claims) standing for "
            f"{judge['claims_filled']} claims no human judged"
        )
    elif decision.get("with_judge"):
        lines.append("  no automatic judge is accepted for this set: human labels only")
    if decision.get("criteria_error"):
        lines.append(f"  criteria could not be read: {decision['criteria_error']}")
    if decision["decision"] == "none":
        lines.append("  the set has no release criteria: set them on the report's criteria page")
    if decision["decision"] == "provisional":
        lines.append("  some claims have no gold yet; the result so far:")
    for result in decision.get("criteria", []):
        mark = "ok  " if result["passed"] else "FAIL"
        lines.append(f"  {mark} {result['criterion']} {result['detail']}")
        for claim in result.get("claims", []) if not result["passed"] else []:
            reason = f" ({claim['reason']})" if claim.get("reason") else ""
            by_judge = " [judge]" if claim.get("verdict_by") == "judge" else ""
            lines.append(f"       {_claim_label(claim)}{by_judge}: {claim['text'][:120]}{reason}")
        hidden = result.get("failing", 0) - len(result.get("claims", []))
        if not result["passed"] and hidden > 0:
            lines.append(f"       … and {hidden} more")
    version = decision.get("criteria_version")
    if version:
        lines.append(
            f"  on criteria version {version['version']} of {_when(version['at'])} "
            f"by {version['by'] or '(unknown)'}"
        )
    return "\n".join(lines)


def _when(stamp: str) -> str:
    """An ISO time as `YYYY-MM-DD HH:MM`, saying UTC when it is."""
    utc = stamp.endswith(("+00:00", "Z"))
    return stamp[:16].replace("T", " ") + (" UTC" if utc else "")


def exit_code(decision: dict[str, Any]) -> int:
    return EXIT_CODES.get(decision["decision"], ERROR)


def _get(base: str, path: str, token: str, timeout: float, **query: str) -> Any:
    url = f"{base.rstrip('/')}/api/v1/{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        try:
            detail = json.load(error).get("detail", "")
        except (ValueError, AttributeError):
            detail = ""
        raise GateError(f"{url}: HTTP {error.code} {detail}".rstrip()) from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise GateError(f"{url}: cannot connect ({error})") from None
    except ValueError:
        raise GateError(f"{url}: the answer is not JSON") from None


def gate(
    *,
    url: str,
    token: str,
    set_ref: str,
    system: str,
    timeout: float = 60,
    with_judge: bool = False,
    run: str | None = None,
) -> dict:
    """The decision for `system` of the set named or numbered `set_ref` (its run `run`, or
    the latest); with `with_judge`, the set's accepted judge stands for the claims no human
    judged."""
    set_id = set_ref
    if not set_ref.isdigit():
        found = _get(url, "sets", token, timeout, name=set_ref)
        if not found:
            raise GateError(f"No set named {set_ref!r} that this token may see.")
        set_id = str(found[0]["id"])
    query = {"system": system} | ({"with_judge": "true"} if with_judge else {})
    if run is not None:
        query["run"] = run
    return _get(url, f"sets/{set_id}/decision", token, timeout, **query)


def main(argv: list[str] | None = None) -> int:
    """The gate's exit code: 0 pass, 1 fail, 2 provisional, 3 anything else, a crash
    included, so that CI never reads a broken gate as a failed system."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return ERROR
    except Exception:
        traceback.print_exc()
        print("gate: crashed; this is an error (exit 3), not a decision", file=sys.stderr)
        return ERROR


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="citeaudit-gate",
        description="Exit 0 if the system passes its set's release criteria, 1 if it fails, "
        "2 if the decision is provisional, 3 on a usage, connection or server error or a crash.",
    )
    parser.add_argument("--url", required=True, help="Citeaudit's address, e.g. https://…")
    parser.add_argument(
        "--token",
        default=os.environ.get("CITEAUDIT_TOKEN", ""),
        help="an API token (default: $CITEAUDIT_TOKEN)",
    )
    parser.add_argument("--set", required=True, dest="set_ref", help="the set's id or name")
    parser.add_argument("--system", required=True, help="the system to decide")
    parser.add_argument("--run", default=None, help="the system's run (default: the latest)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per request")
    parser.add_argument(
        "--with-judge",
        action="store_true",
        help="let the set's accepted automatic judge stand for claims no human judged",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return PASS if exit_.code == 0 else ERROR
    if not args.token:
        print("gate: no token: pass --token or set CITEAUDIT_TOKEN", file=sys.stderr)
        return ERROR
    try:
        decision = gate(
            url=args.url,
            token=args.token,
            set_ref=args.set_ref,
            system=args.system,
            run=args.run,
            timeout=args.timeout,
            with_judge=args.with_judge,
        )
    except GateError as error:
        print(f"gate: {error}", file=sys.stderr)
        return ERROR
    print(describe(decision))
    return exit_code(decision)


if __name__ == "__main__":
    sys.exit(main())
