package tfhe

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
)

func setProcs(n int) (restore func()) {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}

func digestCloudKey(ck *CloudKey) [32]byte {
	h := sha256.New()
	var b [4]byte
	for _, x := range ck.bk.data {
		binary.LittleEndian.PutUint32(b[:], uint32(x))
		h.Write(b[:])
	}
	for _, x := range ck.ksk.data {
		binary.LittleEndian.PutUint32(b[:], uint32(x))
		h.Write(b[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}
