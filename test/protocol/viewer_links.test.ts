import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareLink, DEFAULT_VIEW_URL, liveLink, runId, runLink, sampleLink } from '../../src/protocol/viewer_links.ts';

test("the viewer's addresses: fragment routes with every segment encoded, runs named by their directory", () => {
  assert.equal(DEFAULT_VIEW_URL, 'http://127.0.0.1:7700/');
  assert.equal(runId('/x/runs/swe agent/'), 'swe_agent');
  assert.equal(runLink('a', 'http://h/view/'), 'http://h/view/#/run/a');
  assert.equal(sampleLink('r', 'org/repo#12', 3), 'http://127.0.0.1:7700/#/run/r/task/org%2Frepo%2312/3');
  assert.equal(compareLink('a', 'b', 't?x'), 'http://127.0.0.1:7700/#/compare/a/b/task/t%3Fx');
  assert.equal(liveLink('ep-1', 'http://h/view/'), 'http://h/view/#/live/ep-1');
});
