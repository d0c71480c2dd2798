package gates

// CarrySelectAdder is the carry-select adder of blocks of block bits
// (carrySelect), for the external tests and benchmarks.
func CarrySelectAdder(w, block int) (*Circuit, error) { return adderCircuit(w, block, nil) }
