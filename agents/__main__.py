"""``python -m agents``: play the demo week and print what happened.

    python -m agents                   Gemini with a key, else the deterministic policy
    python -m agents --mode policy     the deterministic policy

The agents run here unwrapped, with nothing to stop them. The committed recording holds the week
as `rescind demo` runs it (wrapped by Rescind, with its extra tools), and `rescind record`
remakes it; replaying it here, unwrapped, misses on the first request that differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .llm import MODES, GeminiUnavailable, RecordingMiss, chat_model, gemini_key
from .week import run_week
from .world import iso


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents", description="Play the demo week.")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="the chat model (default: gemini with a key, else policy)")
    parser.add_argument("--json", action="store_true", help="print the steps, bank and notes as JSON")
    args = parser.parse_args(argv)
    try:
        result = run_week(chat_model(args.mode or ("gemini" if gemini_key() else "policy")))
    except (GeminiUnavailable, RecordingMiss, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"steps": [{"name": s.step.name, "when": iso(s.step.when),
                                     "outcome": s.outcome, "answer": s.answer, "error": s.error}
                                    for s in result.steps],
                          "bank": result.world.snapshot(), "notes": result.notes()}, indent=2))
    else:
        print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
