import { sleep } from '@temporalio/workflow';
export async function spin(): Promise<string> { while (true) { /* a synchronous loop */ } }
export async function fine(): Promise<string> { await sleep(100); return 'done'; }
