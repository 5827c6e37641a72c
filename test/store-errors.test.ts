// The inward error taxonomy: store failures are classified once, where the driver fails.
import assert from 'node:assert/strict';
import { ClickHouseError } from '@clickhouse/client';
import { classifyStoreError } from '../clickhouse/client.ts';
import { isRetryable, StoreUnavailableError } from '../core/errors.ts';

const serverError = (code: string) => new ClickHouseError({ message: `Code: ${code}. DB::Exception`, code, type: 'X' });

describe('store error classification', () => {
  it('keeps a server error a bug unless its code is transient', () => {
    const badSql = serverError('46');
    assert.equal(classifyStoreError(badSql), badSql);
    assert.equal(isRetryable(classifyStoreError(badSql)), false);
    for (const code of ['159', '202', '241']) {
      const classified = classifyStoreError(serverError(code));
      assert.ok(classified instanceof StoreUnavailableError, code);
      assert.equal(isRetryable(classified), true);
    }
  });

  it('classifies transport failures as retryable whatever their message, programming errors as themselves', () => {
    const refused = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    assert.equal(isRetryable(classifyStoreError(refused)), true);
    // The HTTP client's request timeout carries no code at all.
    assert.equal(isRetryable(classifyStoreError(new Error('Timeout error.'))), true);
    const bug = new TypeError('x is not a function');
    assert.equal(classifyStoreError(bug), bug);
  });
});
