import json,glob,os,sys
from inspect_ai.log import read_eval_log
out={}
for d in sorted(glob.glob('logs/*')):
    fs=sorted(glob.glob(d+'/*.eval'))
    if not fs: out[os.path.basename(d)]={'status':'nolog'}; continue
    L=read_eval_log(fs[-1])
    m={}
    if L.results:
        for s in L.results.scores:
            for k,v in s.metrics.items(): m[f"{s.name}/{k}"]=round(v.value,4) if isinstance(v.value,(int,float)) else v.value
    err = (L.error.message[:200] if L.error else None)
    sample_errs=[ (s.error.message[:150] if s.error else None) for s in (L.samples or [])]
    out[os.path.basename(d)]={'status':L.status,'metrics':m,'error':err,'n_samples':len(L.samples or []),'sample_errors':[e for e in sample_errs if e]}
json.dump(out,open('mock_results.json','w'),indent=1)
for k,v in out.items(): print(k, json.dumps(v)[:400])
