#!/bin/bash
set -euo pipefail
python3 -c "import json; u=json.load(open('/app/users.json')); json.dump({x['name']: x['email'] for x in u if x['active']}, open('/app/active.json', 'w'))"
