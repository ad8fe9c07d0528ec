"""python -m checkpointkit_bridge serve|check module:factory"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m checkpointkit_bridge")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="serve a saver factory over the bridge protocol on stdin/stdout")
    s.add_argument("factory", help="module:function giving a saver over fresh storage")
    s.add_argument("--name", help="the server name hello reports")
    c = sub.add_parser("check", help="judge a saver factory with checkpointkit's conformance suite (needs Go)")
    c.add_argument("factory", help="module:function giving a saver over fresh storage")
    c.add_argument("--focus", help="run only the specs whose text matches this regular expression")
    c.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE")
    c.add_argument("-v", "--verbose", action="store_true", help="show the whole go test output")
    args = p.parse_args(argv)
    if args.cmd == "serve":
        from .server import serve

        serve(args.factory, args.name)
        return 0
    from .check import check

    return check(args.factory, focus=args.focus, json_path=args.json, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
