package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/pgtest"
)

// EnvAddr names the variable holding the server's address.
const EnvAddr = "IDSQL_TEST_REDIS_ADDR"

// checkTimeout bounds the PING that Addr sends, dial included.
const checkTimeout = 5 * time.Second

// Addr returns the server's address after checking that it answers PING, or
// stops the test when there is no server.
func Addr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		pgtest.Unavailable(t, "Redis ("+EnvAddr+" unset)")
	}
	if err := ping(addr); err != nil {
		pgtest.Unavailable(t, fmt.Sprintf("Redis at %s (%v)", addr, err))
	}
	return addr
}

// ping sends PING as a RESP array and expects the simple string PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, checkTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(checkTimeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimRight(line, "\r\n"); line != "+PONG" {
		return fmt.Errorf("PING answered %q, want +PONG", line)
	}
	return nil
}
