"""Ask the reference service about one case: python tools/ask_oracle.py CASE.json"""

import json
import os
import sys
import urllib.request

case = json.load(open(sys.argv[1], encoding="utf-8"))
url = os.environ["HARNESSDRIVE_ORACLE_URL"]
request = urllib.request.Request(url, data=json.dumps(case).encode(), method="POST")
with urllib.request.urlopen(request, timeout=10) as response:
    print(json.dumps(json.loads(response.read())))
