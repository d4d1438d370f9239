#!/usr/bin/env python3
"""write_note: a complete parley local tool (contract §6).

Writes a note (`text`, default empty) to `path` under the project root. If the file already exists it
asks the question `overwrite` (yes/no) first, and parley runs the tool again
with the answer in `tool.answers`.

Configure it in `<storage>/config.toml`:

    [conversation.tools.write_note]
    source = "local"
    command = "python3 examples/tools/write_note.py"
    description = "Write a note to a file."
    parameters = { type = "object", properties = { path = { type = "string" }, text = { type = "string" } }, required = ["path"] }
    run = "unattended"

    # Optional: who answers `overwrite` ("user" by default), or a fixed answer.
    [conversation.tools.write_note.questions.overwrite]
    target = "user"

The protocol: parley writes one JSON request on stdin,

    {"tool": {"name": "write_note", "arguments": {...}, "answers": {...}},
     "context": {"action": "run", "root": "/path/to/project", "conversation_id": "17738399468"}}

and the tool prints exactly one JSON outcome on stdout:

    {"type": "success", "content": "..."}
    {"type": "error", "message": "...", "transient": false}
    {"type": "needs_input", "question": {"id": "overwrite", "text": "...",
                                         "answer_type": {"type": "boolean"}, "default": false}}

The working directory is the project root. Anything else printed on stdout
turns into an error (or, with exit code 0, into the tool's plain-text result),
so diagnostics belong on stderr.
"""
import json
import os
import sys


def emit(outcome):
    print(json.dumps(outcome))
    sys.exit(0)


def fail(message):
    emit({"type": "error", "message": message, "transient": False})


def main():
    request = json.load(sys.stdin)
    arguments = request["tool"]["arguments"]
    answers = request["tool"]["answers"]
    root = os.path.realpath(request["context"]["root"])

    relative = arguments["path"]
    text = arguments.get("text", "")
    target = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, target]) != root:
        fail(f"Path '{relative}' is outside the project root.")

    if os.path.isdir(target):
        fail(f"'{relative}' is a directory.")
    if os.path.exists(target):
        answer = answers.get("overwrite")
        if answer is None:
            emit({
                "type": "needs_input",
                "question": {
                    "id": "overwrite",
                    "text": f"Overwrite {relative}?",
                    "pre_amble": f"{relative} already exists ({os.path.getsize(target)} bytes).",
                    "answer_type": {"type": "boolean"},
                    "default": False,
                },
            })
        if answer is not True:
            fail(f"Overwriting {relative} was rejected; the note was not written.")

    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    emit({"type": "success", "content": f"Wrote {len(text)} characters to {relative}."})


if __name__ == "__main__":
    main()
