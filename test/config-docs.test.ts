// docs/configuration.md and `spot --help` come from core/config.ts's SETTINGS: a setting added,
// renamed or re-defaulted without regenerating the page fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CONFIGURATION_DOC, renderConfigurationPage, settingsTable } from '../cli/config-docs.ts';
import { applyFlags, USAGE } from '../cli/main.ts';
import { ConfigError, loadConfig, SETTINGS } from '../core/config.ts';

const page = fs.readFileSync(CONFIGURATION_DOC, 'utf8');
const settings = Object.entries(SETTINGS);
const variables = settings.flatMap(([, s]) => s.variables);

describe('configuration docs generated from core/config.ts', () => {
  it('docs/configuration.md is what `node --import tsx cli/config-docs.ts` writes', () => {
    assert.equal(page, renderConfigurationPage(page), 'run `node --import tsx cli/config-docs.ts` and commit the page');
  });

  it("the page's table has one row per setting, with its variables, flag, default and meaning", () => {
    const rows = page.split('\n').filter((line) => /^\| `SPOT_/.test(line));
    assert.equal(rows.length, settings.length);
    for (const [key, setting] of settings) {
      const row = rows.find((r) => r.startsWith(`| \`${setting.variables[0]}\``));
      assert.ok(row, `${key}: a row for ${setting.variables[0]}`);
      for (const variable of setting.variables) assert.ok(row.includes(`\`${variable}\``), `${key}: ${variable}`);
      assert.ok(row.includes(`| ${setting.default} `) && row.includes(`| ${setting.meaning} `), `${key}: ${row}`);
      if (setting.flag) assert.ok(row.includes(`| \`${setting.flag}\` `), `${key}: ${setting.flag}`);
    }
  });

  it('regenerating keeps the text around the table and replaces a stale table', () => {
    const stale =
      '# Title\n\nIntro.\n\n| Variable | Default | Meaning |\n| - | - | - |\n| `SPOT_OLD` | x | y |\n\nAfter.\n';
    assert.equal(renderConfigurationPage(stale), `# Title\n\nIntro.\n\n${settingsTable()}\n\nAfter.\n`);
  });

  it('a default shown as a literal is the value loadConfig gives when the variable is unset', () => {
    const defaults = loadConfig({});
    let literals = 0;
    for (const [key, setting] of settings) {
      const literal = /^`([^`]+)`$/.exec(setting.default)?.[1];
      if (literal === undefined) continue;
      literals++;
      const expected = key === 'dataDir' ? path.resolve(literal) : literal;
      assert.equal(String(defaults[key as keyof typeof defaults]), expected, `${key}: shown default`);
    }
    assert.ok(literals >= 15, `${literals} literal defaults checked`);
  });

  it('a rejected value names its own variable', () => {
    let rejected = 0;
    for (const [key, setting] of settings) {
      for (const variable of setting.variables) {
        for (const bad of ['not valid!', '-1', 'ftp://x', 'nohost', ',']) {
          try {
            loadConfig({ [variable]: bad });
          } catch (error) {
            rejected++;
            assert.ok(error instanceof ConfigError, `${key}: ${String(error)}`);
            assert.equal(error.variable, variable, `${variable}="${bad}": ${error.message}`);
          }
        }
      }
    }
    assert.ok(rejected >= 40, `${rejected} bad values rejected`);
  });

  it('every variable is read: some accepted value changes the config', () => {
    const defaults = JSON.stringify(loadConfig({}));
    const candidates = [
      '1',
      '9999',
      'http://h:1/',
      'solana',
      'h:1',
      'mainnet',
      'debug',
      'json',
      'open',
      'off',
      'none',
      'abcdefghij',
    ];
    for (const variable of variables) {
      const read = candidates.some((value) => {
        try {
          return JSON.stringify(loadConfig({ [variable]: value })) !== defaults;
        } catch {
          return false;
        }
      });
      assert.ok(read, `${variable} changes nothing`);
    }
  });

  it('each flag sets its variable, and only flags of the list are consumed', () => {
    const flagged = settings.filter(([, s]) => s.flag);
    assert.ok(flagged.length >= 10);
    for (const [key, setting] of flagged) {
      const applied = applyFlags(['up', setting.flag!, 'v', `${setting.flag}=w`], {});
      assert.deepEqual(applied.rest, ['up'], key);
      assert.equal(applied.env[setting.variables[0]!], 'w', `${key}: ${setting.flag}`);
    }
    assert.deepEqual(applyFlags(['--host', 'x'], {}).rest, ['--host', 'x'], 'SPOT_HOST has no flag');
  });

  it('`spot --help` lists every variable with its flag and default', () => {
    for (const [key, setting] of settings) {
      const shown = setting.default.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
      for (const variable of setting.variables) {
        const line = USAGE.split('\n').find((l) => l.startsWith(`  ${variable} `));
        assert.deepEqual(
          line?.trim().split(/ {2,}/),
          [variable, setting.flag, shown].filter(Boolean),
          `${key}: ${variable}`,
        );
      }
    }
    assert.equal(new Set(variables).size, variables.length, 'no variable belongs to two settings');
  });
});
