/**
 * A client of benchgym's WebSocket gym protocol (docs/PROTOCOL.md, "WebSocket gym protocol").
 *
 *   node bin/benchgym.js serve                  # in one terminal
 *   node --import tsx examples/ws_client.ts     # in another
 *
 * It resets the inventory-discount-bug example, looks at the code, fixes the bug, runs the
 * visible tests (their output streams in as `output` notifications), submits and prints the
 * reward. Options: BENCHGYM_URL (default ws://127.0.0.1:7420/ws), BENCHGYM_TOKEN.
 */
import { WebSocket } from 'ws';

type Json = Record<string, any>;

interface StepResult {
  observation: { text: string; data: Json };
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: Json;
}

class GymClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as Json;
      if (msg.method === 'output') process.stderr.write(msg.params.chunk);
      else if (msg.method === 'progress' && msg.params.message) process.stderr.write(`[progress] ${msg.params.message}\n`);
      else if (msg.method === 'output_dropped') process.stderr.write(`[${msg.params.bytes} bytes of output dropped]\n`);
      else if (typeof msg.id === 'number' && this.pending.has(msg.id)) {
        const p = this.pending.get(msg.id)!;
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${msg.error.message} (JSON-RPC ${msg.error.code})`));
        else p.resolve(msg.result);
      }
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('connection closed'));
    });
  }

  static connect(url: string, token?: string): Promise<GymClient> {
    const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new GymClient(ws)));
      ws.once('error', reject);
    });
  }

  call<T = any>(method: string, params: Json = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  step(episode_id: string, tool: string, args: Json = {}): Promise<StepResult> {
    return this.call<StepResult>('step', { episode_id, tool, args });
  }

  close(): void {
    this.ws.close();
  }
}

const url = process.env.BENCHGYM_URL ?? 'ws://127.0.0.1:7420/ws';
const gym = await GymClient.connect(url, process.env.BENCHGYM_TOKEN);
try {
  const { episode_id, observation } = await gym.call<{ episode_id: string; observation: { text: string } }>('reset', {
    task_id: 'inventory-discount-bug',
    options: { max_steps: 30 },
  });
  console.log(`reset: ${episode_id}\n${observation.text.split('\n').slice(0, 3).join('\n')}\n`);

  const viewed = await gym.step(episode_id, 'view_file', { path: 'shop/cart.py', start_line: 74, end_line: 79 });
  console.log(viewed.observation.text, '\n');

  const fixed = await gym.step(episode_id, 'edit_file', {
    path: 'shop/cart.py',
    old_str:
      '        return sum(\n            (line_total for product, _, line_total ' +
      'in self.lines() if product.taxable),\n            Decimal("0.00"),\n        )',
    new_str:
      '        taxable = sum(\n            (line_total for product, _, line_total in ' +
      'self.lines() if product.taxable),\n            Decimal("0.00"),\n        )\n' +
      '        return taxable - percent_of(taxable, self.coupon_percent)',
  });
  // A failed tool call is an observation, not an exception: the loop goes on.
  console.log(fixed.info.error ? `edit failed: ${fixed.observation.text}` : fixed.observation.text.split('\n')[0], '\n');

  const tests = await gym.step(episode_id, 'run_tests');
  console.log(`\n${tests.observation.text.split('\n')[0]}\n`);

  const result = await gym.call<StepResult>('submit', { episode_id });
  console.log(result.observation.text);
  console.log(`\nreward=${result.reward} terminated=${result.terminated} truncated=${result.truncated}`);
} finally {
  gym.close();
}
