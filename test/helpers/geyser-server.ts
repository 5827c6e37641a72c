// A Yellowstone gRPC (Geyser) node on loopback for the Geyser source's tests: node's http2 speaking
// gRPC (h2c, 5-byte length prefix + protobuf, `grpc-status` trailers) with the package's own
// protobuf types. Subscribe replays its blocks from the request's fromSlot (or from the newest),
// pushes new ones as they are added, answers pings, and injects faults on demand.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import {
  SubscribeRequest,
  SubscribeUpdate,
  type SubscribeUpdateBlock,
  type SubscribeUpdateTransactionInfo,
} from '@triton-one/yellowstone-grpc';
import { base58Decode } from '../../ingest/solana/base58.ts';
import type { RpcInstruction, RpcTokenBalance, SolanaTransaction } from '../../ingest/solana/transaction.ts';

/** A getTransaction-shaped transaction as Geyser sends it (the inverse of ingest/sources/solana-geyser-block.ts). */
export function toGeyserTransaction(
  tx: Omit<SolanaTransaction, 'slot' | 'blockTime'>,
  index: number,
): SubscribeUpdateTransactionInfo {
  const message = tx.transaction.message;
  const meta = tx.meta!;
  const bytes = (text: string) => base58Decode(text);
  const ix = (i: RpcInstruction) => ({
    programIdIndex: i.programIdIndex,
    accounts: Uint8Array.from(i.accounts),
    data: bytes(i.data),
    ...(i.stackHeight != null ? { stackHeight: i.stackHeight } : {}),
  });
  const balance = (b: RpcTokenBalance) => ({
    accountIndex: b.accountIndex,
    mint: b.mint,
    owner: b.owner ?? '',
    programId: b.programId ?? '',
    uiTokenAmount: {
      amount: b.uiTokenAmount.amount,
      decimals: b.uiTokenAmount.decimals,
      uiAmount: b.uiTokenAmount.uiAmount ?? 0,
      uiAmountString: b.uiTokenAmount.uiAmountString ?? '',
    },
  });
  const keys = message.accountKeys.map((key) => (typeof key === 'string' ? key : key.pubkey));
  return {
    signature: bytes(tx.transaction.signatures[0]!),
    isVote: false,
    index: String(index),
    transaction: {
      signatures: tx.transaction.signatures.map(bytes),
      message: {
        header: message.header ?? {
          numRequiredSignatures: 1,
          numReadonlySignedAccounts: 0,
          numReadonlyUnsignedAccounts: 0,
        },
        accountKeys: keys.map(bytes),
        recentBlockhash: bytes(message.recentBlockhash ?? '11111111111111111111111111111111'),
        instructions: message.instructions.map((i) => ({
          programIdIndex: i.programIdIndex,
          accounts: Uint8Array.from(i.accounts),
          data: bytes(i.data),
        })),
        versioned: tx.version === 0,
        addressTableLookups: [],
      },
    },
    meta: {
      err: meta.err == null ? undefined : { err: Uint8Array.from([8, 0, 0, 0]) },
      fee: String(meta.fee),
      preBalances: (meta.preBalances ?? []).map(String),
      postBalances: (meta.postBalances ?? []).map(String),
      innerInstructions: (meta.innerInstructions ?? []).map((inner) => ({
        index: inner.index,
        instructions: inner.instructions.map(ix),
      })),
      innerInstructionsNone: meta.innerInstructions == null,
      logMessages: meta.logMessages ?? [],
      logMessagesNone: meta.logMessages == null,
      preTokenBalances: (meta.preTokenBalances ?? []).map(balance),
      postTokenBalances: (meta.postTokenBalances ?? []).map(balance),
      rewards: [],
      loadedWritableAddresses: (meta.loadedAddresses?.writable ?? []).map(bytes),
      loadedReadonlyAddresses: (meta.loadedAddresses?.readonly ?? []).map(bytes),
      returnData: undefined,
      returnDataNone: true,
    },
  };
}

/** gRPC message framing: uncompressed flag, 4-byte big-endian length, the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(frame, 5);
  return frame;
}

/** Faults of one stream. */
export interface StreamFaults {
  /** Drop the connection after this many messages. */
  dropAfter?: number;
  /** Send this raw payload (not protobuf) as a message after `at` messages. */
  garbage?: { at: number; bytes: Uint8Array };
  /** Send this block instead of the one of its slot, once. */
  replace?: { slot: number; block: SubscribeUpdateBlock };
  /** Say nothing at all. */
  silent?: boolean;
}

export interface GeyserServer {
  url: string;
  /** Slot → block; add with `add` so open streams get it pushed. */
  blocks: Map<number, SubscribeUpdateBlock>;
  add(block: SubscribeUpdateBlock): void;
  /** Every Subscribe's first request (filters, commitment, fromSlot). */
  requests: SubscribeRequest[];
  /** Tokens the clients sent (x-token). */
  tokens: Array<string | undefined>;
  pings: number;
  /** Faults of the next streams, in order: each stream takes the first. */
  faults: StreamFaults[];
  /** fromSlot below this is refused (INVALID_ARGUMENT), as a node whose replay buffer moved on. */
  oldestReplay: number;
  sendPing(): void;
  close(): Promise<void>;
}

export async function startGeyserServer(): Promise<GeyserServer> {
  const server = http2.createServer();
  const sessions = new Set<http2.Http2Session>();
  const live = new Set<(update: SubscribeUpdate) => boolean>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
  });
  const state: GeyserServer = {
    url: '',
    blocks: new Map(),
    requests: [],
    tokens: [],
    pings: 0,
    faults: [],
    oldestReplay: 0,
    add(block) {
      state.blocks.set(Number(block.slot), block);
      for (const send of live) send(SubscribeUpdate.fromPartial({ filters: ['spot'], block }));
    },
    sendPing() {
      for (const send of live) send(SubscribeUpdate.fromPartial({ filters: ['spot'], ping: {} }));
    },
    async close() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers[':path'] !== '/geyser.Geyser/Subscribe') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
      return;
    }
    state.tokens.push(headers['x-token'] as string | undefined);
    let pending = Buffer.alloc(0);
    let first = true;
    let sent = 0;
    const faults = state.faults.shift() ?? {};
    let send = (_update: SubscribeUpdate) => false;
    const open = () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      send = (update) => {
        if (stream.destroyed || faults.silent) return false;
        if (faults.garbage && sent === faults.garbage.at) {
          stream.write(grpcFrame(faults.garbage.bytes));
          faults.garbage = undefined;
        }
        let message = update;
        if (update.block && faults.replace && Number(update.block.slot) === faults.replace.slot) {
          message = SubscribeUpdate.fromPartial({ filters: update.filters, block: faults.replace.block });
          faults.replace = undefined;
        }
        stream.write(grpcFrame(SubscribeUpdate.encode(message).finish()));
        sent++;
        if (faults.dropAfter !== undefined && sent >= faults.dropAfter) {
          stream.session?.destroy();
          return false;
        }
        return true;
      };
    };
    const onRequest = (request: SubscribeRequest) => {
      if (!first) {
        if (request.ping) {
          state.pings++;
          send(SubscribeUpdate.fromPartial({ filters: [], pong: { id: request.ping.id } }));
        }
        return;
      }
      first = false;
      state.requests.push(request);
      const from = request.fromSlot !== undefined ? Number(request.fromSlot) : null;
      if (from !== null && from < state.oldestReplay) {
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': '3',
            'grpc-message': `broadcast from ${from} is not available, last available: ${state.oldestReplay}`,
          },
          { endStream: true },
        );
        return;
      }
      open();
      const slots = [...state.blocks.keys()].sort((a, b) => a - b);
      const start = from ?? (slots.length > 0 ? slots[slots.length - 1]! + 1 : 0);
      for (const slot of slots) {
        if (slot < start) continue;
        if (!send(SubscribeUpdate.fromPartial({ filters: ['spot'], block: state.blocks.get(slot)! }))) return;
      }
      live.add(pushLive);
    };
    const pushLive = (update: SubscribeUpdate) => send(update);
    stream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
        const length = pending.readUInt32BE(1);
        onRequest(SubscribeRequest.decode(pending.subarray(5, 5 + length)));
        pending = pending.subarray(5 + length);
      }
    });
    stream.on('close', () => live.delete(pushLive));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
