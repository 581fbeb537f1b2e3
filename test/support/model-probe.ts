// Python lines the network tests' probe tasks share: whether the task reaches its model.

/** Sets `model` to whether the task's model endpoint answers `GET /models` with the task's key. */
export const PY_MODEL_ANSWERS = `request = urllib.request.Request(os.environ["BENCHROUTER_MODEL_ENDPOINT"] + "/models", headers={"Authorization": "Bearer " + os.environ["BENCHROUTER_API_KEY"]})
try:
    model = urllib.request.urlopen(request, timeout=10).status == 200
except OSError:
    model = False`;
