"""An Inspect hook that tags each model call with its sample: header X-BenchRouter-Instance: <sample id>, so the
BenchRouter gateway joins the call's usage to the sample's record. Inspect's own extension point (a `@hooks`
class, found through the `inspect_ai` entry point beside this file); it changes no message, tool or score.
The bridge puts this directory on PYTHONPATH; a direct `inspect eval` in the same image never loads it."""

from inspect_ai.hooks import BeforeModelGenerate, Hooks, SampleEnd, SampleStart, hooks

HEADER = "X-BenchRouter-Instance"


@hooks(name="benchrouter_instance_header", description="tags each model call with its sample id for the BenchRouter gateway")
class InstanceHeader(Hooks):
    def __init__(self) -> None:
        # Inspect's hooks name a running sample by its execution uuid; records name it by its dataset id.
        self.dataset_ids: dict[str, str] = {}

    async def on_sample_start(self, data: SampleStart) -> None:
        self.dataset_ids[data.sample_id] = str(data.summary.id)

    async def on_sample_end(self, data: SampleEnd) -> None:
        self.dataset_ids.pop(data.sample_id, None)

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        # data.config is this call's own copy (Inspect merges a new one per generate), read by the provider after
        # this hook: its extra_headers go out with the request.
        instance = self.dataset_ids.get(data.sample_id or "")
        if instance is not None:
            data.config.extra_headers = {**(data.config.extra_headers or {}), HEADER: instance}
