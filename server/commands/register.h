// The command families, each in its own file, add themselves to the table
// through these functions (called once, while CommandTable is built).
#pragma once

#include "server/command_table.h"

namespace kvlab {

void RegisterConnectionCommands(CommandTable& table);  // PING ECHO AUTH HELLO SELECT QUIT CLIENT
void RegisterStringCommands(CommandTable& table);      // GET SET ... INCR APPEND MGET MSET
void RegisterKeyspaceCommands(CommandTable& table);    // DEL EXISTS EXPIRE TTL PERSIST DBSIZE FLUSH*
void RegisterServerCommands(CommandTable& table);      // INFO COMMAND TIME FUNCTION SCRIPT
void RegisterConfigCommand(CommandTable& table);       // CONFIG
void RegisterMemoryCommand(CommandTable& table);       // MEMORY
void RegisterTransactionCommands(CommandTable& table); // MULTI EXEC DISCARD WATCH UNWATCH
void RegisterContainerCommands(CommandTable& table);   // hashes, lists, sets, sorted sets
void RegisterSetAlgebraCommands(CommandTable& table);  // SINTER SUNION SDIFF
// ZUNION ZINTER ZDIFF ZINTERCARD ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZRANGESTORE ZMPOP
void RegisterZSetAlgebraCommands(CommandTable& table);
void RegisterSortCommands(CommandTable& table);        // SORT SORT_RO
void RegisterClusterCommands(CommandTable& table);     // CLUSTER (--shard-ports)
void RegisterLifecycleCommands(CommandTable& table);   // SAVE SHUTDOWN
void RegisterBitCommands(CommandTable& table);         // SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD

// The reply of one container or string-command operation, whatever its
// kind (container_commands.cc).
void RenderContainerResult(const OpResult& result, ReplyWriter& writer);

}  // namespace kvlab
