package redisqueue

import "github.com/redis/go-redis/v9"

// Every script that reads or writes a queue list first checks that the
// server's run_id is the one in the list's name. A restarted server has a
// new run_id, so a list it reloaded from an old snapshot, which may still
// hold keys that were popped after the snapshot was taken, is never popped
// from nor pushed to again. The check and the list operation run in one
// script, atomically: no restart can fall between them.
//
// A failed check answers the error "IDSQLSTALE <current run_id>".

// runIDCheck is the common prologue; ARGV[1] is the expected run_id.
// replicate_commands lets a script write after INFO (not deterministic) on
// Redis before 5, where scripts were replicated verbatim; later servers
// replicate effects anyway and treat it as a no-op.
const runIDCheck = `
if redis.replicate_commands then redis.replicate_commands() end
local rid = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
if rid ~= ARGV[1] then
	return redis.error_reply('IDSQLSTALE ' .. tostring(rid))
end
`

// popScript pops up to ARGV[2] keys from KEYS[1] and answers
// {length left, "key key ..."}: one string rather than one reply element
// per key saves the client an allocation per key.
var popScript = redis.NewScript(runIDCheck + `
local keys = redis.call('LPOP', KEYS[1], tonumber(ARGV[2]))
local s = ''
if keys then s = table.concat(keys, ' ') end
return {redis.call('LLEN', KEYS[1]), s}
`)

// pushScript appends the keys of ARGV[3], separated by spaces, to KEYS[1]
// unless the chunk marker KEYS[2] exists, which it then creates with a time
// to live of ARGV[2] ms. The marker names the chunk by its first key,
// unique for ever because ranges never overlap: a push the client retries
// after a lost reply (go-redis retries on network errors) is not applied
// twice. It answers the list's length, or -1 for a chunk pushed already.
var pushScript = redis.NewScript(runIDCheck + `
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[2])) then
	return -1
end
local keys = {}
for k in string.gmatch(ARGV[3], '%d+') do keys[#keys + 1] = k end
return redis.call('RPUSH', KEYS[1], unpack(keys))
`)

// lenScript answers the length of KEYS[1].
var lenScript = redis.NewScript(runIDCheck + `
return redis.call('LLEN', KEYS[1])
`)

// unlockScript deletes the lock KEYS[1] if it still holds the token
// ARGV[1]: a lock that expired and was taken by another refiller is left to
// its new owner.
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)
