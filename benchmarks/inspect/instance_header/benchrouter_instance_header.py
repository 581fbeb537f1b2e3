"""An Inspect hook that tags each model call with its sample: header X-BenchRouter-Instance: <sample id>, so the
BenchRouter gateway joins the call's usage to the sample's record. Inspect's own extension point (a `@hooks`
class, found through the `inspect_ai` entry point beside this file); it changes no message, tool or score.
The bridge puts this directory on PYTHONPATH; a direct `inspect eval` in the same image never loads it."""

from inspect_ai.hooks import BeforeModelGenerate, Hooks, hooks

# BeforeModelGenerate.sample_id is the running attempt's own id, which no other hook reports alongside the
# dataset's sample id (SampleStart gives the sample's uuid instead), so the sample is read where Inspect itself
# reads it for this event: its active sample (inspect_ai 0.3.285).
from inspect_ai.log._samples import sample_active

HEADER = "X-BenchRouter-Instance"


@hooks(name="benchrouter_instance_header", description="tags each model call with its sample id for the BenchRouter gateway")
class InstanceHeader(Hooks):
    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        # data.config is this call's own copy (Inspect merges a new one per generate), read by the provider after
        # this hook: its extra_headers go out with the request.
        active = sample_active()
        if active is not None:
            data.config.extra_headers = {**(data.config.extra_headers or {}), HEADER: str(active.sample.id)}
