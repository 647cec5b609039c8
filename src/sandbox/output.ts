/**
 * Keeps the first and last `limit/2` bytes of a stream while counting everything, so a
 * command printing gigabytes is drained at full speed in bounded memory.
 */
export class CappedOutput {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  total = 0;

  constructor(limit: number) {
    this.headLimit = Math.ceil(limit / 2);
    this.tailLimit = Math.floor(limit / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headLimit) {
      const take = Math.min(chunk.length, this.headLimit - this.headLen);
      this.head.push(chunk.subarray(0, take));
      this.headLen += take;
      chunk = chunk.subarray(take);
      if (!chunk.length) return;
    }
    if (this.tailLimit === 0) return;
    if (chunk.length >= this.tailLimit) {
      this.tail = [Buffer.from(chunk.subarray(chunk.length - this.tailLimit))];
      this.tailLen = this.tailLimit;
      return;
    }
    this.tail.push(Buffer.from(chunk));
    this.tailLen += chunk.length;
    while (this.tailLen > this.tailLimit) {
      const first = this.tail[0]!;
      const excess = this.tailLen - this.tailLimit;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLen -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailLen -= excess;
      }
    }
  }

  get dropped(): number {
    return this.total - this.headLen - this.tailLen;
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (this.dropped === 0) return head + tail;
    return `${head}\n[... ${this.dropped} bytes omitted (${this.total} in all) ...]\n${tail}`;
  }
}
