// Packs made by hand, and the index git itself writes for one: shared by the pack-index tests.
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { gitCli } from '../../../fixtures/git-server.js'

/** The index git itself writes for `pack`, made in a new folder under `work`. */
export async function gitIndexIn (work: string, pack: Buffer): Promise<Buffer> {
  const dir = await mkdtemp(path.join(work, 'idx-'))
  await writeFile(path.join(dir, 'x.pack'), pack)
  await gitCli(['index-pack', '-o', path.join(dir, 'x.idx'), path.join(dir, 'x.pack')], { cwd: dir })
  return await readFile(path.join(dir, 'x.idx'))
}

/** A pack made by hand from `entries` (each: type code, header extra bytes, raw data to deflate). */
export function makePack (entries: Array<{ type: number, data: Buffer, extra?: Buffer, size?: number, deflated?: Buffer }>): Buffer {
  const parts: Buffer[] = [Buffer.from('PACK'), Buffer.from([0, 0, 0, 2]), Buffer.alloc(4)]
  parts[2]?.writeUInt32BE(entries.length)
  for (const e of entries) {
    let size = e.size ?? e.data.length
    const header = [((e.type & 7) << 4) | (size & 0x0f)]
    size = Math.floor(size / 16)
    while (size > 0) {
      header[header.length - 1] = (header[header.length - 1] as number) | 0x80
      header.push(size & 0x7f)
      size = Math.floor(size / 128)
    }
    parts.push(Buffer.from(header), e.extra ?? Buffer.alloc(0), e.deflated ?? deflateSync(e.data))
  }
  const body = Buffer.concat(parts)
  return Buffer.concat([body, createHash('sha1').update(body).digest()])
}
