// The command families, each in its own file, add themselves to the table
// through these functions (called once, while CommandTable is built).
#pragma once

#include <optional>

#include "server/command_table.h"

namespace kvlab {

void RegisterConnectionCommands(CommandTable& table);  // PING ECHO AUTH HELLO SELECT QUIT CLIENT
void RegisterStringCommands(CommandTable& table);      // GET SET ... INCR APPEND MGET MSET
void RegisterKeyspaceCommands(CommandTable& table);  // DEL EXISTS EXPIRE TTL PERSIST DBSIZE FLUSH*
void RegisterServerCommands(CommandTable& table);    // INFO COMMAND TIME FUNCTION SCRIPT
void RegisterConfigCommand(CommandTable& table);     // CONFIG
void RegisterMemoryCommand(CommandTable& table);     // MEMORY
void RegisterTransactionCommands(CommandTable& table);  // MULTI EXEC DISCARD WATCH UNWATCH
void RegisterContainerCommands(CommandTable& table);    // hashes, lists, sets, sorted sets
void RegisterSetAlgebraCommands(CommandTable& table);   // SINTER SUNION SDIFF
// ZUNION ZINTER ZDIFF ZINTERCARD ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZRANGESTORE ZMPOP
void RegisterZSetAlgebraCommands(CommandTable& table);
void RegisterListMoveCommands(CommandTable& table);   // LMOVE RPOPLPUSH LMPOP
void RegisterSortCommands(CommandTable& table);       // SORT SORT_RO
void RegisterClusterCommands(CommandTable& table);    // CLUSTER (--shard-ports)
void RegisterLifecycleCommands(CommandTable& table);  // SAVE SHUTDOWN
void RegisterBitCommands(CommandTable& table);  // SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
void RegisterHllCommands(CommandTable& table);  // PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST
void RegisterGeoCommands(CommandTable& table);  // GEOADD GEOPOS ... GEOSEARCHSTORE
void RegisterDumpRestoreCommands(CommandTable& table);  // DUMP RESTORE
void RegisterRewriteCommand(CommandTable& table);       // BGREWRITEAOF
// BLPOP BRPOP BLMPOP BLMOVE BRPOPLPUSH BZPOPMIN BZPOPMAX BZMPOP
void RegisterBlockingCommands(CommandTable& table);
// SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE SUNSUBSCRIBE
// PUBLISH SPUBLISH PUBSUB
void RegisterPubSubCommands(CommandTable& table);
void RegisterMonitorCommand(CommandTable& table);  // MONITOR
// The Pub/Sub messages waiting in `client`'s mailbox, taken and rendered in
// its protocol (pubsub_commands.cc).
std::string RenderPubSubMessages(ClientState& client);
// Copies what CLIENT LIST shows of `client` (name, protocol, subscriptions)
// into its listing, if it has one (connection_commands.cc).
void RefreshListing(const ClientState& client);

// The reply of one container or string-command operation, whatever its
// kind (container_commands.cc).
void RenderContainerResult(const OpResult& result, ReplyWriter& writer);
// A command whose table entry names its container command: queued on
// args[1] with its arguments, its reply that operation's.
void RunContainerCommand(CommandCall& call);

// The reply of a group of steps that write (SMOVE, LMOVE, the STOREs): the
// first error among them (a WRONGTYPE key, a bad option), else the step
// whose index is the deferred reply's `flags` (container_commands.cc).
void RenderFirstErrorOr(const DeferredReply& deferred, std::span<const OpResult> results,
                        ReplyWriter& writer, ServerContext&);

// ZMPOP and LMPOP: numkeys key [key ...] `first_end`|`second_end` [COUNT
// count], checked as zmpopGenericCommand() and lmpopGenericCommand() do,
// then one guard step `step` per key (multi_pop.cc).
void QueueMultiPop(CommandCall& call, std::string_view step, std::string_view first_end,
                   std::string_view second_end);
// Its two halves: the check (numkeys, or nullopt after replying the error)
// and the steps, as one group, on args[2 .. 2 + numkeys) (the caller defers
// the reply).
std::optional<size_t> ParseMultiPop(CommandCall& call, std::string_view first_end,
                                    std::string_view second_end);
void QueueMultiPopSteps(CommandCall& call, std::string_view step, size_t numkeys);
// LMOVE's and RPOPLPUSH's group on args[1] (source) and args[2]
// (destination), ends in args[3] and args[4] (list_move_commands.cc).
void QueueListMove(CommandCall& call);
// LEFT or RIGHT, in any case.
bool IsListEnd(std::string_view arg);

}  // namespace kvlab
