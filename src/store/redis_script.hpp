// The Lua script that runs every change inside redis-server, so that check-insert is atomic for
// all simdup processes sharing the server (Redis runs one script at a time).
//
// Layout under the prefix KEYS[1] = "simdup:{COLLECTION}:" (the hash tag keeps a collection on
// one cluster slot):
//   docs         hash  id -> "FP TIME S1 .. Sn" (fingerprint as 16 hex digits, block key suffixes)
//   b<Si>        set   members FP..id: the documents with block key suffix Si, which names a
//                      pair of blocks and their values (pigeonhole; see append_block_keys)
//   time         zset  id scored by its time in seconds (exact in a double; fingerprints are
//                      never scores)
//   sketch       hash  id -> the document's verification sketch (collection_config::sketch
//                      hashes at most; 4-byte little-endian hashes), only for documents that have
//                      one
//   bands        hash  id -> the document's MinHash band keys, 16 hex digits each, band 0 first;
//                      only for documents that have them
//   m<B>:<KEY>   zset  the ids of the documents whose band B has key KEY (16 hex digits), scored
//                      by their time: the oldest come first, and the window is a score range
//   stats        hash  inserted, expired, deleted
//
// ARGV: op, k, window_s, now, max_matches, blocks, documents, verify threshold (0: off), sketch
// size, bands (0: none), band bucket cap, then per document: id, FP, time, sketch (empty: none),
// band keys (the bands' keys as 16 hex digits each, concatenated; empty: none), S1 .. Sn. op is
// check | insert | check_insert | delete (ARGV[12] = id) | expire.
// Answer for documents: one array per document {inserted 0/1, then per match id, distance,
// shared, compared} (the Jaccard is shared / compared; compared 0: not verified), closest first,
// then by id; a match found by a band alone may be farther than k (its real distance) and is
// always verified. For delete: 1 or 0; for expire: the number expired.
//
// Verification runs here, not in C++, because the decision must be part of the atomic
// check-and-insert; jaccard() mirrors sketch_jaccard (src/dedup/verify.cpp) step by step, and
// tests/e2e/test_service_verify.py checks that both stores give the same values.
#pragma once

namespace simdup::detail {

inline constexpr const char* redis_script = R"lua(
local p = KEYS[1]
local op = ARGV[1]
local k = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local maxm = tonumber(ARGV[5])
local nb = tonumber(ARGV[6])
local nd = tonumber(ARGV[7])
local verify = tonumber(ARGV[8])
local cap = tonumber(ARGV[9])
local mb = tonumber(ARGV[10])
local mcap = tonumber(ARGV[11])

-- Population count of a 16-bit value (SWAR), then the Hamming distance of two 16-digit hex
-- fingerprints 16 bits at a time (exact in Lua numbers).
local band, rshift = bit.band, bit.rshift
local function pop16(x)
  x = x - band(rshift(x, 1), 0x5555)
  x = band(x, 0x3333) + band(rshift(x, 2), 0x3333)
  x = band(x + rshift(x, 4), 0x0f0f)
  return band(x + rshift(x, 8), 0x1f)
end
local function dist(a, b)
  local d = 0
  for i = 1, 16, 4 do
    d = d + pop16(bit.bxor(tonumber(string.sub(a, i, i + 3), 16),
                           tonumber(string.sub(b, i, i + 3), 16)))
  end
  return d
end

-- The zsets of n band keys (16 hex digits each, band 0 first); none unless mk holds n keys.
local function band_keys(mk, n)
  local t = {}
  if n == 0 or #mk ~= 16 * n then return t end
  for i = 1, n do
    t[i] = p .. 'm' .. (i - 1) .. ':' .. string.sub(mk, 16 * i - 15, 16 * i)
  end
  return t
end

-- Sorted hashes of a stored sketch; the bottom-k Jaccard of two as (shared, compared), the
-- walk of sketch_jaccard: the union's smallest hashes, at most cap of them, none above the
-- largest hash of a sketch that was cut to cap.
local function hashes(s)
  local t = {}
  for i = 1, #s, 4 do t[#t + 1] = struct.unpack('<I4', s, i) end
  return t
end
local function jaccard(a, b)
  local bound = math.huge
  if #a >= cap then bound = math.min(bound, a[#a]) end
  if #b >= cap then bound = math.min(bound, b[#b]) end
  local i, j, both, total = 1, 1, 0, 0
  while total < cap and (i <= #a or j <= #b) do
    local nxt, shared = 0, false
    if j > #b or (i <= #a and a[i] < b[j]) then
      nxt = a[i]; i = i + 1
    elseif i > #a or b[j] < a[i] then
      nxt = b[j]; j = j + 1
    else
      nxt = a[i]; i = i + 1; j = j + 1; shared = true
    end
    if nxt > bound then break end
    total = total + 1
    if shared then both = both + 1 end
  end
  return both, total
end

local function unlink(id)
  local v = redis.call('HGET', p .. 'docs', id)
  if not v then return false end
  local parts = {}
  for w in string.gmatch(v, '%S+') do parts[#parts + 1] = w end
  for i = 3, #parts do
    redis.call('SREM', p .. 'b' .. parts[i], parts[1] .. id)
  end
  local mk = redis.call('HGET', p .. 'bands', id)
  if mk then
    for _, key in ipairs(band_keys(mk, math.floor(#mk / 16))) do redis.call('ZREM', key, id) end
    redis.call('HDEL', p .. 'bands', id)
  end
  redis.call('HDEL', p .. 'docs', id)
  redis.call('HDEL', p .. 'sketch', id)
  redis.call('ZREM', p .. 'time', id)
  return true
end

local function expire(limit)
  if window <= 0 then return 0 end
  local old = redis.call('ZRANGEBYSCORE', p .. 'time', '-inf', now - window,
                         'LIMIT', 0, limit)
  local n = 0
  for _, id in ipairs(old) do
    if unlink(id) then n = n + 1 end
  end
  if n > 0 then redis.call('HINCRBY', p .. 'stats', 'expired', n) end
  return n
end

if op == 'delete' then
  if unlink(ARGV[12]) then
    redis.call('HINCRBY', p .. 'stats', 'deleted', 1)
    return 1
  end
  return 0
end
if op == 'expire' then
  return expire(100000)
end

-- A bounded share of the expiry rides on each request; the service's expiry loop does the rest.
expire(100)
local out = {}
local inserted = 0
local a = 12
for d = 1, nd do
  local id, fp, ts, sk, mk = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local t = tonumber(ts)
  local blocks = {}
  for i = 1, nb do blocks[i] = ARGV[a + 4 + i] end
  a = a + 5 + nb
  local mkeys = band_keys(mk, mb)
  if #mkeys == 0 then mk = '' end
  local res = {0}
  local hits = {}
  if op ~= 'insert' then
    local mine = (verify > 0 and #sk > 0) and hashes(sk) or nil
    local seen = {}
    for i = 1, nb do
      for _, m in ipairs(redis.call('SMEMBERS', p .. 'b' .. blocks[i])) do
        if not seen[m] then
          seen[m] = true
          local dd = dist(fp, string.sub(m, 1, 16))
          if dd <= k then
            local mid = string.sub(m, 17)
            local ok = true
            if window > 0 then
              local mt = tonumber(redis.call('ZSCORE', p .. 'time', mid))
              ok = mt ~= nil and mt + window > t
            end
            local both, total = 0, 0
            if ok and mine then
              local other = redis.call('HGET', p .. 'sketch', mid)
              if other then
                both, total = jaccard(mine, hashes(other))
                ok = (total > 0 and both / total or 0) >= verify
                if total == 0 then total = 1 end -- two empty sets: similarity 0, verified
              end
            end
            if ok then hits[#hits + 1] = {dd, mid, both, total} end
          end
        end
      end
    end
    -- MinHash bands: the live documents sharing a band key with this one, however far their
    -- fingerprints are. Only a verified pair is a duplicate this way, so without a sketch there
    -- is nothing to find. At most mcap (64) ids per band, the oldest: a family of thousands of
    -- copies sharing a key must not cost thousands of Jaccard walks inside this script (which
    -- blocks the server), and its oldest members are the ones its new copies should link to.
    if mine and #mkeys > 0 then
      -- The window as a score range: time + window > t, as for the block sets above.
      local from = window > 0 and string.format('(%.17g', t - window) or '-inf'
      local banded = {}
      for i = 1, #mkeys do
        for _, mid in ipairs(redis.call('ZRANGEBYSCORE', mkeys[i], from, '+inf',
                                        'LIMIT', 0, mcap)) do
          if not banded[mid] then
            banded[mid] = true
            local v = redis.call('HGET', p .. 'docs', mid)
            local dd = v and dist(fp, string.sub(v, 1, 16)) or 0
            -- Within k it is in a block set too and was judged above (pigeonhole: every
            -- document within k shares a pair of blocks): listed once, as a SimHash candidate.
            if v and dd > k then
              local other = redis.call('HGET', p .. 'sketch', mid)
              if other then
                local both, total = jaccard(mine, hashes(other))
                if total > 0 and both / total >= verify then
                  hits[#hits + 1] = {dd, mid, both, total}
                end
              end
            end
          end
        end
      end
    end
    table.sort(hits, function(x, y)
      if x[1] ~= y[1] then return x[1] < y[1] end
      return x[2] < y[2]
    end)
    for i = 1, math.min(#hits, maxm) do
      res[#res + 1] = hits[i][2]
      res[#res + 1] = hits[i][1]
      res[#res + 1] = hits[i][3]
      res[#res + 1] = hits[i][4]
    end
  end
  if op == 'insert' or (op == 'check_insert' and #hits == 0) then
    unlink(id)
    redis.call('HSET', p .. 'docs', id, fp .. ' ' .. ts .. ' ' .. table.concat(blocks, ' '))
    if #sk > 0 then redis.call('HSET', p .. 'sketch', id, sk) end
    if #mkeys > 0 then
      redis.call('HSET', p .. 'bands', id, mk)
      for i = 1, #mkeys do redis.call('ZADD', mkeys[i], ts, id) end
    end
    for i = 1, nb do redis.call('SADD', p .. 'b' .. blocks[i], fp .. id) end
    redis.call('ZADD', p .. 'time', ts, id)
    inserted = inserted + 1
    res[1] = 1
  end
  out[d] = res
end
if inserted > 0 then redis.call('HINCRBY', p .. 'stats', 'inserted', inserted) end
return out
)lua";

}  // namespace simdup::detail
