"""gptme's calls written in a reply's text, and its tools' outputs told as errors (issue 34)."""

from __future__ import annotations

from store.agents.gptme.calls import calls_in, is_error_output


def test_a_save_block_holding_a_fenced_block_is_one_call_with_its_whole_content() -> None:
    text = ("Writing the README.\n\n```save README.md\n# Demo\n\n```shell\nmake\n```\n\nDone.\n"
            "```\n\nThat is all.")
    [call] = calls_in(text)
    assert (call.tool, call.call_id) == ("save", None)
    assert call.arguments == {"path": "README.md",
                              "content": "# Demo\n\n```shell\nmake\n```\n\nDone."}


def test_blocks_that_run_nothing_and_blocks_in_thinking_or_never_closed_are_no_calls() -> None:
    text = ("<think>\n```shell\nrm -rf build\n```\n</think>\n```python\nprint(1)\n```\n"
            "```stdout\nok\n```\n```py\nprint(2)\n```\n```shell\nls")
    assert [(c.tool, c.arguments) for c in calls_in(text)] == [
        ("ipython", {"code": "print(2)"})]


def test_tool_format_lines_are_calls_with_their_ids_and_json_or_python_arguments() -> None:
    text = ("Checking.\n@shell(call_1): {\"command\": \"echo '}'\"}\n"
            "```text\n@shell(call_2): {\"command\": \"not a call\"}\n```\n"
            "@read(toolu_3): {'path': 'a.py'}\n@save(call_4): {\"path\": ")
    found = calls_in(text)
    assert [(c.tool, c.call_id, c.arguments) for c in found] == [
        ("shell", "call_1", {"command": "echo '}'"}), ("read", "toolu_3", {"path": "a.py"})]


def test_outputs_that_say_a_call_failed_are_errors_and_others_are_not() -> None:
    failed = ["Error executing tool 'shell': boom", "Error during execution: Patch failed: x",
              "Ran command: `false`\n\nNo output\nReturn code: 1\n",
              "Command denied: `rm -rf /`\n\nnever", "Operation aborted: user chose not to run.",
              "Command timed out (after 60s): `sleep 99`", "File not found: setup.py",
              "Tool 'shell' was not executed (interrupted)."]
    fine = ["Ran command: `ls`\n\n```stdout\nReturn code: 1\nREADME.md\n```\n\n",
            "Saved to a.py", "Patch successfully applied to `a.py`"]
    assert [is_error_output(t) for t in failed] == [True] * len(failed)
    assert [is_error_output(t) for t in fine] == [False] * len(fine)
