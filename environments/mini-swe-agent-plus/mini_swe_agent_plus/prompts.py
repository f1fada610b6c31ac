"""The texts the model sees: the system prompt, the task template and the turn-rule messages."""

SYSTEM_PROMPT = (
    "You are a software engineer working in a Linux shell through tools. Every response must "
    "contain exactly ONE tool call; a response with none or several is rejected and still "
    "costs a turn."
)

USER_PROMPT = """<pr_description>
{problem_statement}
</pr_description>

<instructions>
The repository is checked out at {repo_dir}. Change its non-test source files so that the
behaviour described above is fixed. Do not edit tests or configuration files: they are
restored before grading, and hidden tests decide whether the fix is right.

A good way to work:
1. Look around the code that the description points to.
2. Reproduce the problem with a short script or the existing tests.
3. Edit the source with edit_via_str_replace (or a shell command).
4. Run the script and the tests again; think about edge cases.

Rules:
- Exactly one tool call per response.
- Every execute_bash call runs in a fresh shell in {repo_dir}: `cd` and exported variables
  do not carry over. Commands must not wait for input. A command is killed after {timeout:g} s.
- {blocked_rule}
- When you are done, submit by running exactly this command on its own:
  echo {sentinel}
  Nothing can be changed after that.
</instructions>"""

FORMAT_ERROR = (
    "Please always provide EXACTLY ONE tool call, found {n} tool calls. Run one command (or "
    "one edit) per response; to finish, call execute_bash with `echo {sentinel}`."
)
TIMEOUT_MESSAGE = (
    "The last command <command>{command}</command> timed out after {timeout:g} s and has been "
    "killed.\nOutput before it was killed:\n<output>\n{output}\n</output>\nPlease try another "
    "command and make sure to avoid those requiring interactive input or running forever."
)
