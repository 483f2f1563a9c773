#!/usr/bin/python3
"""Fails on a commit message that breaks the project's form.

Every commit after SINCE (the last commit before the rule) has a subject of
at most 72 characters and, unless it is a merge, a body: a blank line after
the subject, then what changed and why.

  scripts/check_commit_messages.py [--repo DIR] [--since REV] [REV]

REV defaults to HEAD. Needs the history back to SINCE (a full clone; a
shallow one fails and says so). Prints one line per offending commit, its
full hash first, and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

# the last commit before the rule (105e520)
RULE_SINCE = "105e520f6b7eb2d9c46b7ebb7866eb92ae81206a"
MAX_SUBJECT = 72


def git(repo: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)


def offences(repo: str, since: str, rev: str) -> list[str]:
    for name in (since, rev):
        found = git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
        if found.returncode != 0:
            shallow = git(repo, "rev-parse", "--is-shallow-repository").stdout.strip()
            hint = " (a shallow clone: fetch the full history)" if shallow == "true" else ""
            raise SystemExit(f"check_commit_messages: no commit {name} in {repo}{hint}")
    # %s is the subject as git shows it (a first paragraph of several lines
    # is one subject); %b the rest.
    listed = git(repo, "log", "--format=%H%x00%P%x00%s%x00%b%x1e", f"{since}..{rev}")
    if listed.returncode != 0:
        raise SystemExit(f"check_commit_messages: git log failed: {listed.stderr.strip()}")
    problems = []
    for record in filter(str.strip, listed.stdout.split("\x1e")):
        commit, parents, subject, body = record.lstrip("\n").split("\x00", 3)
        merge = len(parents.split()) > 1
        if len(subject) > MAX_SUBJECT:
            problems.append(f"{commit}: subject of {len(subject)} characters "
                            f"(at most {MAX_SUBJECT}): {subject[:MAX_SUBJECT]}...")
        if not merge and not body.strip():
            problems.append(f"{commit}: no body (a blank line after the subject, then "
                            f"what and why): {subject[:MAX_SUBJECT]}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--since", default=RULE_SINCE)
    parser.add_argument("rev", nargs="?", default="HEAD")
    args = parser.parse_args(argv[1:])
    problems = offences(args.repo, args.since, args.rev)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_commit_messages: {len(problems)} problem(s) after {args.since}; "
              "reword with git rebase -i before merging")
        return 1
    count = git(args.repo, "rev-list", "--count", f"{args.since}..{args.rev}").stdout.strip()
    print(f"check_commit_messages: {count} commit(s) after {args.since}, all well formed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
