"""The command line of simdup.dask: ``python3 -m simdup.dask dedup INPUT... --out DIR``.

The options of ``simdup dedup`` keep its names, defaults and meanings (the help texts follow
cli/options.cpp and cli/cmd_dedup.cpp; python/tests/test_dask_cli.py compares the defaults with
``simdup dedup --help``), plus the cluster's own. Every value is checked before a cluster
starts: the dedup options by the library's own rules (``simdup._core.dedup_parameters``, which
speaks of parameters; the messages are turned into flags here), the cluster's by
``simdup.dask._check_options``. Command-line errors exit 2, as the CLI's do.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import textwrap
from typing import Any, Dict, List, NoReturn, Optional, Sequence

from .errors import ParameterError

PROG = "python3 -m simdup.dask"
_SCHEDULER = "local:2"  # the command line's cluster when --scheduler is not given
_COMMANDS = ("dedup",)

# Options of `simdup dedup` that the Dask form does not have, and why.
_POSTGRES = ("--from", "--table", "--query", "--id-column", "--text-column", "--url-column",
             "--title-column", "--time-column", "--fetch-rows", "--to", "--to-table",
             "--to-kept-table", "--run", "--batch-rows")
_CLI_ONLY = {"--report-clusters": "report.html shows the 10 largest clusters",
             "--duplicates-parquet": "duplicates.jsonl only",
             "--memory-limit": "each worker's memory is Dask's (its memory_limit and spilling)",
             "--resume": "a Dask job keeps no journal to resume; Dask retries a failed task",
             "--no-index": "the Dask form writes no index; a `simdup dedup` run of the same "
                           "input does (docs/incremental.md)",
             **{flag: "the PostgreSQL source and output are the CLI's" for flag in _POSTGRES}}
# Settings (ParameterError.parameter) whose library name is no option's destination; the CLI's
# table is cli/options.cpp's flag_of.
_SETTING_FLAGS = {"verify.threshold": "--verify jaccard:T",
                  "verify.shingle_width": "--verify-shingle-width",
                  "clustering": "--clusters"}


class UsageError(Exception):
    """A command-line error: its message names flags; exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting, so that every usage error reads the
    same ("simdup.dask dedup: error: ..." and the --help hint)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.HelpFormatter):
    """Lines wrapped at spaces only, so that no flag (--id-column) is cut at its hyphen."""

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text, width, indent):
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False)


def _option(group, *flags: str, default: Any = None, **kwargs) -> None:
    """An option whose default, when it has one, is the library's (shown, not passed: an
    option not given is left out of the options, so the library's default applies)."""
    text = kwargs.pop("help")
    if default is not None:
        text += f" (default: {default})"
    group.add_argument(*flags, default=argparse.SUPPRESS, help=text, **kwargs)


def _flag(group, *flags: str, help: str) -> None:
    group.add_argument(*flags, action="store_true", default=argparse.SUPPRESS, help=help)


def dedup_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=f"{PROG} dedup", usage="%(prog)s [OPTIONS] INPUT... --out DIR",
        allow_abbrev=False, add_help=False, formatter_class=_Formatter,
        description="Find exact and near duplicates in a corpus on a Dask cluster and write "
                    "DIR/kept-NNNNN.<format> (kept records, unchanged, one shard per input "
                    "partition), duplicates.jsonl, summary.json and report.html: the decisions "
                    "of `simdup dedup` (docs/distributed.md).",
        epilog=f"Not in the Dask form: stdin; {_missing()}. Exit status: 0 done, 1 the run failed, 2 usage error, 3 done with skipped "
               "records or inputs (--on-error skip).")
    p.add_argument("-h", "--help", action="help", help="Show this help and exit")
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="Input files or globs, read in this order (no stdin). .gz and .zst are "
                        "decompressed; the workers must see them under the same paths")

    g = p.add_argument_group("Input")
    _option(g, "--input-format", metavar="FORMAT", default="auto",
            help="Input format: auto (by the extension: .jsonl .json .ndjson .tsv .csv .txt .warc "
                 ".wet, under .gz/.zst, else by the content), jsonl, ndjson, json, tsv, csv, "
                 "text, txt, warc, wet")
    for name, what, default in (("id", "the document id", "id"), ("text", "the text", "text"),
                                ("url", "the URL", "url"), ("title", "the title", "title"),
                                ("time", "the time (unix seconds or ISO-8601)", "time")):
        _option(g, f"--{name}-field", metavar="NAME", default=default,
                help=f"JSONL key / CSV column of {what}")
    _option(g, "--features-field", metavar="NAME", default="features",
            help='JSONL key of supplied features: ["tok", ...] or [["tok", weight], ...]')
    _option(g, "--max-record-mb", type=int, metavar="MB", default=1024,
            help="Records larger than this (MiB) are bad records")

    g = p.add_argument_group("Dedup")
    _option(g, "--out", metavar="DIR",
            help="Output directory (required), created when the run succeeds; may exist if "
                 "empty; the workers must see it under the same path (shared storage)")
    _flag(g, "--force",
          help="Replace --out DIR even if it is not empty (when the run succeeds)")
    _option(g, "--mode", metavar="MODE", default="batch",
            help="stream: keep the first, drop later documents within k of a kept one; batch: "
                 "all pairs, clusters, one representative each")
    _option(g, "--layers", metavar="LIST", default="url,exact,near",
            help="Comma-separated layers, applied cheapest first: url (same normalised URL), "
                 "title (same normalised title; opt-in), exact (same normalised text), near "
                 "(SimHash within k)")
    _option(g, "--keep", metavar="POLICY", default="first",
            help="Representative of a cluster (batch): first, longest, newest, field:NAME "
                 "(largest number in JSON field NAME)")
    _option(g, "-k", "--k", type=int, metavar="K", default=8,
            help="Near duplicates: documents whose fingerprints differ in at most k of 64 bits "
                 f"(inclusive, 0-{_max_k()})")
    _option(g, "--clusters", metavar="LINKING", default="anchored",
            help="Batch clusters: star links each duplicate directly to its representative; "
                 "components joins every chain (connected components); anchored: components of "
                 "verified links, members whose Jaccard with the representative is under "
                 "--anchor-floor split off (star when --verify off); centers: clusters around "
                 "the most linked documents, every member linked to its cluster's center")
    _option(g, "--minhash", metavar="BANDSxROWS", default="10x6",
            help="MinHash-LSH bands over the verification shingles as a second candidate "
                 "generator beside SimHash (batch, with --verify; ignored with --verify off); "
                 "off: SimHash only")
    _option(g, "--anchor-floor", type=float, metavar="J", default=0.8,
            help="--clusters anchored: least Jaccard of a member with its representative")
    _option(g, "--verify", metavar="SPEC", default="jaccard:0.8",
            help="jaccard:T: confirm each near pair by the Jaccard similarity of character "
                 "shingle sets, drop pairs below T; off: every pair within k is a duplicate")
    _option(g, "--verify-shingle-width", type=int, metavar="N", default=5,
            help="Code points per verification shingle")
    _option(g, "--verify-max-hashes", type=int, metavar="N", default=0,
            help="Keep only the N smallest shingle hashes per document (bottom-k sketch, 4*N "
                 "bytes); 0 keeps all (exact Jaccard)")
    _option(g, "--tmp-dir", metavar="DIR",
            help="Directory for the temporary file of --verify's shingle arrays in the cluster "
                 "tasks (default: the worker's TMPDIR, else /tmp)")
    _flag(g, "--zstd", help="Write kept records zstd-compressed (kept-NNNNN.<format>.zst)")
    _flag(g, "--annotate",
          help="Also write annotated-NNNNN.<format>: every input record in input order with its "
               "decision (keep, cluster, duplicate_of, distance, layer, jaccard): JSONL gets a "
               '"simdup" object, CSV six simdup_* columns at the end, TSV six columns before '
               "the id (JSONL, CSV and TSV inputs)")

    g = p.add_argument_group("Against earlier runs")
    g.add_argument("--against", metavar="DIR", action="append", default=argparse.SUPPRESS,
                   help="An earlier run's output directory (or its index/, or a merged index): "
                        "drop the documents that are exact or verified near duplicates of its "
                        "documents, naming them in duplicates.jsonl (\"against\"); repeatable; "
                        "batch mode; the detection settings must be the index's; the workers "
                        "must see it under the same path")
    _flag(g, "--against-only",
          help="Decontamination: drop only the documents that match --against (an evaluation "
               "set's run), compare the input with nothing else; DIR/against_hits.jsonl says "
               "which of its documents were hit how often")

    g = p.add_argument_group("Normalisation")
    _flag(g, "--html", help="Treat text as HTML: drop tags, comments, script/style; decode "
                            "entities (WARC responses are always HTML)")
    _flag(g, "--no-nfkc", help="Skip Unicode NFKC (full-width to half-width)")
    _flag(g, "--no-casefold", help="Skip Unicode case folding")
    _flag(g, "--no-t2s", help="Skip traditional-to-simplified Chinese (OpenCC)")
    _flag(g, "--keep-punctuation", help="Keep punctuation and symbols (removed by default)")
    _flag(g, "--strip-digits", help="Remove decimal digits")

    g = p.add_argument_group("Features")
    _option(g, "--features", metavar="KIND", default="shingles",
            help="Feature kind: shingles (character n-grams), words, word-ngrams, jieba, "
                 "keywords (jieba TF-IDF)")
    _option(g, "--shingle-width", type=int, metavar="N", default=4,
            help="Code points per shingle")
    _option(g, "--ngram", type=int, metavar="N", default=2,
            help="Words per word n-gram (word-ngrams)")
    _option(g, "--min-token-length", type=int, metavar="N", default=1,
            help="Drop tokens shorter than this many code points (words, jieba, keywords)")
    _option(g, "--jieba-dict", metavar="FILE",
            help="jieba dictionary (default: the built-in location)")
    _option(g, "--user-dict", action="append", metavar="FILE",
            help="jieba user dictionary (`word [freq] [tag]` per line); repeat for several, "
                 "loaded in order (jieba, keywords, compat jieba-tfidf)")
    _option(g, "--min-features", type=int, metavar="N", default=10,
            help="Documents with fewer distinct features get status too_short")

    g = p.add_argument_group("Weighting and hashing")
    _option(g, "--weighting", metavar="SCHEME", default="count",
            help="Feature weights: count (occurrences), binary, tfidf (needs --idf)")
    _option(g, "--idf", metavar="FILE",
            help="IDF file, `word idf` per line (jieba's idf.txt format)")
    _option(g, "--stopwords", metavar="FILE", help="Stop-word file, one word per line")
    _option(g, "--top-k", type=int, metavar="K", default=0,
            help="Keep only the K heaviest features (0: all)")
    _option(g, "--hash", metavar="HASH", default="xxh3", help="Feature hash: xxh3, fnv1a, md5")
    _option(g, "--compat", metavar="MODE", default="none",
            help="Bit-for-bit compatibility: python-simhash (the Python simhash package 2.x; "
                 "ignores the options above), jieba-tfidf, none")

    g = p.add_argument_group("Errors and progress")
    _option(g, "--on-error", metavar="POLICY", default="fail",
            help="Bad records and unreadable inputs: fail (stop, exit 1, DIR untouched) or "
                 "skip (count them by reason in summary.json, go on; exit 3)")
    _option(g, "--threads", type=int, metavar="N", default=1,
            help="Threads of each task's C++ steps (0: all the worker's cores; Dask runs a "
                 "task per worker thread)")
    _flag(g, "-q", "--quiet", help="No summary line on stdout (errors only)")

    g = p.add_argument_group("Cluster")
    _option(g, "--scheduler", metavar="ADDRESS", default=_SCHEDULER,
            help="tcp://HOST:8786 (a running Dask scheduler) or local:N (N worker processes "
                 "on this machine, one thread each, on 127.0.0.1)")
    _option(g, "--partitions", type=int, metavar="N",
            help="Reduce partitions of the shuffles (default: one per 500,000 documents, at "
                 "least twice the workers)")
    _option(g, "--partition-bytes", type=int, metavar="BYTES", default=256 << 20,
            help="JSONL/TSV files larger than this are read as several partitions (Parquet "
                 "files as runs of whole row groups), smaller "
                 "consecutive files of one kind share one (0: a partition per file)")
    _flag(g, "--no-pack-files", help="A partition per file (or byte range): no packing")
    _option(g, "--near-prefix-blocks", type=int, metavar="R", default=1,
            help="Blocks a near-layer table's key holds: k + R blocks, C(k + R, R) tables")
    return p


def _missing() -> str:
    """The CLI-only options, grouped by why."""
    by_reason: Dict[str, List[str]] = {}
    for flag, why in _CLI_ONLY.items():
        by_reason.setdefault(why, []).append(flag)
    return "; ".join(f"{', '.join(flags)} ({why})" for why, flags in by_reason.items())


def _max_k() -> int:
    from . import _core
    return int(_core.MAX_INDEX_K)


def _top_help() -> str:
    return (f"usage: {PROG} COMMAND [OPTIONS]\n\n"
            "simdup's dedup job on a Dask distributed cluster (docs/distributed.md).\n\n"
            "commands:\n"
            "  dedup    Find exact and near duplicates in a corpus and write an output "
            "directory\n\n"
            f"Run `{PROG} dedup --help` for its options.\n")


def _suggestion(word: str, choices: Sequence[str]) -> str:
    """"; did you mean X?" for the closest choice, compared without leading dashes (which every
    flag shares), or nothing when none is close."""
    names = {c.lstrip("-"): c for c in choices}
    close = difflib.get_close_matches(word.lstrip("-"), list(names), n=1, cutoff=0.6)
    return f"; did you mean {names[close[0]]}?" if close else ""


def _unknown(extras: List[str], parser: argparse.ArgumentParser) -> None:
    """Raises for the first argument argparse did not take: an option the Dask form lacks (a
    CLI-only one, or a typo, with the closest option), or one left over."""
    for arg in extras:
        name = arg.split("=", 1)[0]
        if name in _CLI_ONLY:
            raise UsageError(f"{name} is an option of `simdup dedup` that the Dask form does not "
                             f"have: {_CLI_ONLY[name]}")
        if name.startswith("-") and name != "-":
            flags = [f for a in parser._actions for f in a.option_strings]
            raise UsageError(f"unknown option {name}{_suggestion(name, flags)}")
        raise UsageError(f"unexpected argument {arg!r}")


def _flags(parser: argparse.ArgumentParser) -> Dict[str, argparse.Action]:
    """Option name (as the library's parameters are named) -> its option."""
    return {a.dest: a for a in parser._actions if a.option_strings}


def flag_message(error: Exception, flags: Dict[str, argparse.Action]) -> str:
    """An error about a setting (a ParameterError, whose message names the library's parameters:
    "k must be in 0..32, got 40") in terms of this command's flags ("--k must be in 0..32, got
    40"); other errors as they are."""
    if not isinstance(error, ParameterError):
        return str(error)
    option = flags.get(error.parameter)
    flag = _SETTING_FLAGS.get(error.parameter) or (option.option_strings[-1] if option else "")
    if not flag:
        return str(error)
    if error.needs:
        # The option that sets what is missing, with its metavar: "--idf FILE".
        needed = flags.get(error.needs)
        if error.needs == "verify":
            wording = "--verify jaccard:T"
        elif needed:
            wording = needed.option_strings[-1] + (f" {needed.metavar}" if needed.metavar else "")
        else:
            return str(error)
        return f"{flag}{' ' + error.value if error.value else ''} needs {wording}"
    return flag + ("" if error.reason.startswith(":") else " ") + error.reason


def _run_dedup(args: argparse.Namespace, flags: Dict[str, argparse.Action]) -> int:
    from . import dask as sdask
    given = vars(args)
    inputs = given.pop("inputs")
    out = given.pop("out", None)
    force = given.pop("force", False)
    zstd = given.pop("zstd", False)
    annotate = given.pop("annotate", False)
    quiet = given.pop("quiet", False)
    scheduler = given.pop("scheduler", _SCHEDULER)
    # simdup.dask.dedup's own keywords, where given (its defaults are the help's).
    own = {name: given.pop(name) for name in ("partitions", "partition_bytes",
                                              "near_prefix_blocks") if name in given}
    if given.pop("no_pack_files", False):
        own["pack_files"] = False
    options = given  # the rest are the library's options, under their own names
    if not inputs:
        raise UsageError("give one or more inputs (files or globs; no stdin)")
    if "-" in inputs:
        raise UsageError("the Dask form reads files or globs, not stdin ('-')")
    if out is None:
        raise UsageError("--out DIR is required")
    try:
        sdask._check_options(options, scheduler=scheduler, **own)
        sdask._check_out(out, force)
    except (ValueError, TypeError) as e:
        raise UsageError(flag_message(e, flags)) from None
    except FileExistsError as e:  # a usage error, as in the CLI
        raise UsageError(str(e)) from None
    cluster = None
    try:
        client, cluster = sdask._client_for(scheduler)
        _, summary = sdask.dedup(inputs, client=client, out=out, force=force, zstd=zstd,
                                 annotate=annotate, **own, **options)
    except FileExistsError as e:
        print(f"simdup.dask dedup: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError) as e:
        print(f"simdup.dask dedup: error: {flag_message(e, flags)}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    docs = summary["documents"]
    if not quiet:
        print(f"{docs['read']} records: {docs['kept']} kept, {docs['duplicates']} duplicates, "
              f"{docs['skipped']} skipped; {out}")
    return 3 if docs["skipped"] + summary["inputs"]["skipped"] else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(_top_help())
        return 0
    if not args or args[0] not in _COMMANDS:
        what = (f"unknown command {args[0]!r}{_suggestion(args[0], _COMMANDS)}" if args
                else "give a command")
        print(f"simdup.dask: error: {what}\nRun `{PROG} --help` for the commands.",
              file=sys.stderr)
        return 2
    parser = dedup_parser()
    flags = _flags(parser)
    try:
        parsed, extras = parser.parse_known_intermixed_args(args[1:])
        _unknown(extras, parser)
        return _run_dedup(parsed, flags)
    except UsageError as e:
        print(f"simdup.dask dedup: error: {e}\nRun `{PROG} dedup --help` for the options.",
              file=sys.stderr)
        return 2
    except SystemExit as e:  # --help, printed by argparse
        return int(e.code or 0)
