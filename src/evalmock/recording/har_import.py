"""`evalmock fixtures import --har FILE… -o DATA`: the answers of recorded traffic made into a data
file for `evalmock serve --data`, with a summary of what it holds and what the recording lacks."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from evalmock.exits import FAILED, OK, USAGE
from evalmock.harness.secrets.har_entries import learn_har_entry
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.traffic.har import MAX_HAR_BYTES
from evalmock.harness.traffic.har_stream import Unreadable, har_entries, string_bound
from evalmock.input_files import open_regular, too_large
from evalmock.recording.accumulator import MAX_BODY_BYTES, Recording, Refused
from evalmock.recording.answers import Source, har_answer
from evalmock.recording.output import WriteOptions, write_recording
from evalmock.recording.summary import summary

PREFIX = "evalmock fixtures import: "


def read_har(path: Path, recording: Recording, redactor: Redactor) -> None:
    """Feed every entry of a HAR file to the recording, each one's secrets learned first; OSError or
    Unreadable when the file cannot be read whole."""
    with open_regular(path) as file:
        if os.fstat(file.fileno()).st_size > MAX_HAR_BYTES:
            raise Unreadable(f"is {too_large(MAX_HAR_BYTES)}")
        # a string longer than any body read takes is cut as it is parsed, never held whole
        entries = har_entries(file, MAX_HAR_BYTES, max_string=string_bound(MAX_BODY_BYTES))
        for index, entry in enumerate(entries):
            if isinstance(entry, dict):
                learn_har_entry(redactor, entry)
            request = entry.get("request") if isinstance(entry, dict) else None
            method = str(request.get("method", "")) if isinstance(request, dict) else ""
            url = str(request.get("url", "")) if isinstance(request, dict) else ""
            source = Source(f"{path.name} entry {index}", method, redactor.url(url))
            answer = har_answer(entry, source, MAX_BODY_BYTES)
            if answer is None:
                recording.refused.append(Refused(source, "no request URL and status to read"))
            else:
                recording.feed(answer)


def run_import(args: argparse.Namespace) -> int:
    # A requested stop (SIGTERM) ends the import as Ctrl-C does: the temporary files (the store, the
    # data file's part written so far, the rules' check) removed on the way out, exit 130.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    recording = Recording()
    try:
        return _imported(args, recording)
    finally:
        recording.close()
        signal.signal(signal.SIGTERM, previous)


def _imported(args: argparse.Namespace, recording: Recording) -> int:
    redactor = Redactor()
    for name in args.har:
        try:
            read_har(Path(name), recording, redactor)
        except OSError as exc:
            print(f"{PREFIX}cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
            return USAGE
        except Unreadable as exc:
            print(f"{PREFIX}{name} {exc}", file=sys.stderr)
            return USAGE
    seed = args.seed if args.anonymize else None
    try:
        written = write_recording(recording, args.output, redactor, WriteOptions(seed))
    except OSError as exc:
        print(f"{PREFIX}cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return FAILED
    print(summary(recording, written, args.output, redactor))
    return OK
