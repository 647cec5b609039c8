import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Long test runs: reset the client's request timeout on every progress notification. */
export const LONG_CALL = { timeout: 120_000, resetTimeoutOnProgress: true, maxTotalTimeout: 15 * 60_000 };

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: { progress: number; message?: string }) => void,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { ...LONG_CALL, onprogress })) as CallToolResult;
}

export function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

export function data<T = Record<string, any>>(result: CallToolResult): T {
  assert.ok(result.structuredContent, 'the tool returned structuredContent');
  return result.structuredContent as T;
}

export const REPRO_TEST = `from decimal import Decimal

from shop import Cart, Inventory, Product


def test_coupon_lowers_the_tax():
    inventory = Inventory()
    inventory.add_product(Product("MUG", "Coffee mug", Decimal("20.00")), stock=10)
    cart = Cart(inventory)
    cart.add("MUG", 2)
    cart.apply_coupon(10)
    assert cart.tax() == Decimal("2.97")
`;

export const BUGGY = `        return sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )`;

export const FIXED = `        taxable = sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )
        return taxable - percent_of(taxable, self.coupon_percent)`;

/**
 * Solves the inventory-discount-bug example as an agent would: reproduce the bug with a
 * test (failing run_tests), fix the code (edit_file), see the test pass, submit → reward 1.
 * `args` adds the episode id for the gym-wide endpoint and nothing for a scoped one.
 */
export async function solveRepoPatch(
  client: Client,
  args: Record<string, unknown>,
): Promise<{ verdict: Record<string, any>; progress: string[] }> {
  const tree = await call(client, 'list_dir', { ...args, path: '.' });
  assert.match(text(tree), /cart\.py/);
  const viewed = await call(client, 'view_file', { ...args, path: 'shop/cart.py', start_line: 70, end_line: 90 });
  assert.match(text(viewed), /def taxable_amount/);

  assert.equal((await call(client, 'create_file', { ...args, path: 'tests/test_repro.py', content: REPRO_TEST })).isError, undefined);
  const failing = await call(client, 'run_tests', { ...args, tests: ['tests/test_repro.py'] });
  assert.equal(data(failing).counts.failed, 1, text(failing));
  const log = await call(client, 'view_error_log', args);
  assert.match(text(log), /test_coupon_lowers_the_tax/);
  assert.match(text(log), /AssertionError|assert/);

  const edited = await call(client, 'edit_file', { ...args, path: 'shop/cart.py', old_str: BUGGY, new_str: FIXED });
  assert.equal(edited.isError, undefined, text(edited));
  const passing = await call(client, 'run_tests', { ...args, tests: ['tests/test_repro.py'] });
  assert.deepEqual(data(passing).counts, { passed: 1, failed: 0, error: 0, skipped: 0 }, text(passing));
  const all = await call(client, 'run_tests', args);
  assert.equal(data(all).counts.failed, 0, text(all));

  const diff = await call(client, 'get_diff', args);
  assert.match(text(diff), /percent_of\(taxable, self\.coupon_percent\)/);

  const progress: string[] = [];
  const submitted = await call(client, 'submit', args, (p) => p.message && progress.push(p.message));
  assert.equal(submitted.isError, undefined, text(submitted));
  return { verdict: data(submitted), progress };
}
