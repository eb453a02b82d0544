//! Locals safety: a local is read, moved or borrowed only when it surely
//! holds a value, and a value without `drop` is never overwritten or left
//! behind at return.

use crate::{
    absint::{analyze, Domain, Transfer},
    binary::FunctionContext,
    cfg::Cfg,
    error::{VerifyError, VerifyResult},
    meter::Meter,
    types::abilities,
};
use movejit_format::{AbilitySet, Bytecode, CompiledModule, StatusCode};

const STEP_BASE_COST: u128 = 10;
const JOIN_BASE_COST: u128 = 10;
const JOIN_PER_LOCAL_COST: u128 = 5;
const RET_PER_LOCAL_COST: u128 = 30;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Local {
    Unavailable,
    MaybeAvailable,
    Available,
}

#[derive(Clone, PartialEq, Eq)]
struct State(Vec<Local>);

impl Domain for State {
    fn join(&mut self, other: &Self, meter: &mut Meter) -> VerifyResult<bool> {
        meter.add(JOIN_BASE_COST)?;
        meter.add_items(JOIN_PER_LOCAL_COST, self.0.len())?;
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            let j = if *a == *b { *a } else { Local::MaybeAvailable };
            if j != *a {
                *a = j;
                changed = true;
            }
        }
        Ok(changed)
    }
}

struct Analysis<'a> {
    f: &'a FunctionContext<'a>,
    local_abilities: Vec<AbilitySet>,
}

pub(crate) fn verify(m: &CompiledModule, f: &FunctionContext, cfg: &Cfg, meter: &mut Meter) -> VerifyResult {
    let mut local_abilities = Vec::with_capacity(f.num_locals());
    for t in f.parameters.iter().chain(f.locals) {
        local_abilities
            .push(abilities(m, t, f.type_parameters).map_err(|e| VerifyError::at_function(e.status, f.index))?);
    }
    let initial = State(
        (0..f.num_locals())
            .map(|i| if i < f.parameters.len() { Local::Available } else { Local::Unavailable })
            .collect(),
    );
    analyze(&mut Analysis { f, local_abilities }, initial, f.code, cfg, meter)
}

impl Transfer for Analysis<'_> {
    type State = State;
    fn execute(&mut self, s: &mut State, instr: &Bytecode, offset: u16, _end: u16, meter: &mut Meter) -> VerifyResult {
        meter.add(STEP_BASE_COST)?;
        let err = |st| self.f.err(st, offset);
        let get = |s: &State, i: u8| s.0.get(i as usize).copied().ok_or_else(|| err(StatusCode::INDEX_OUT_OF_BOUNDS));
        match instr {
            Bytecode::StLoc(i) => {
                let l = get(s, *i)?;
                if l != Local::Unavailable && !self.local_abilities[*i as usize].has_drop() {
                    return Err(err(StatusCode::STLOC_UNSAFE_TO_DESTROY_ERROR));
                }
                s.0[*i as usize] = Local::Available;
            }
            Bytecode::MoveLoc(i) => {
                if get(s, *i)? != Local::Available {
                    return Err(err(StatusCode::MOVELOC_UNAVAILABLE_ERROR));
                }
                s.0[*i as usize] = Local::Unavailable;
            }
            Bytecode::CopyLoc(i) if get(s, *i)? != Local::Available => {
                return Err(err(StatusCode::COPYLOC_UNAVAILABLE_ERROR));
            }
            Bytecode::MutBorrowLoc(i) | Bytecode::ImmBorrowLoc(i) if get(s, *i)? != Local::Available => {
                return Err(err(StatusCode::BORROWLOC_UNAVAILABLE_ERROR));
            }
            Bytecode::Ret => {
                meter.add_items(RET_PER_LOCAL_COST, s.0.len())?;
                for (l, a) in s.0.iter().zip(&self.local_abilities) {
                    if *l != Local::Unavailable && !a.has_drop() {
                        return Err(err(StatusCode::UNSAFE_RET_UNUSED_VALUES_WITHOUT_DROP));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}
