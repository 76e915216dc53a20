"""Which files a skip list skips. For now this asks the reference service, which will not exist
where skiplist is deployed: replace it with a pure-Python implementation."""

import json
import os
import urllib.request


def skipped(case):
    """The sorted list of ``case["files"]`` that ``case["patterns"]`` skip."""
    url = os.environ.get("HARNESSDRIVE_ORACLE_URL", "http://127.0.0.1:9")
    request = urllib.request.Request(url, data=json.dumps(case).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())
