"""The request every harness gets for a mined task: the same words for everyone."""

from __future__ import annotations

_PROMPT = (
    "Make the change described below in this repository.\n"
    "\n"
    "Change request:\n"
    "{request}\n"
    "\n"
    "When you finish, the repository's own tests will check your work. Test files you edit are"
    " put back first, so change the code, not the tests. You can run the tests with this"
    " command: {test_command}\n"
    "Do not commit. No one will answer questions, so make reasonable choices and complete the"
    " change.\n"
)


def agent_prompt(subject: str, body: str, test_command: str) -> str:
    """The prompt for a task; the body paragraph appears only when the commit message has one."""
    request = subject + (f"\n\n{body}" if body else "")
    return _PROMPT.format(request=request, test_command=test_command)
