//! A work budget for the abstract interpreters, so that no input makes the
//! verifier run quadratic-plus time. Units follow Move's meter (per step, per
//! join, per borrow-graph item).

use crate::{config::VerifierConfig, error::VerifyError};
use movejit_format::StatusCode;

pub(crate) struct Meter {
    fun_units: u128,
    mod_units: u128,
    fun_limit: Option<u128>,
    mod_limit: Option<u128>,
    status: StatusCode,
}

impl Meter {
    pub fn new(config: &VerifierConfig) -> Self {
        Meter {
            fun_units: 0,
            mod_units: 0,
            fun_limit: config.max_per_fun_meter_units,
            mod_limit: config.max_per_mod_meter_units,
            status: config.meter_status,
        }
    }

    pub fn enter_function(&mut self) {
        self.fun_units = 0;
    }

    /// Charges the function's total to the module budget.
    pub fn leave_function(&mut self) -> Result<(), VerifyError> {
        self.mod_units = self.mod_units.saturating_add(self.fun_units);
        self.fun_units = 0;
        match self.mod_limit {
            Some(l) if self.mod_units > l => Err(self.too_complex()),
            _ => Ok(()),
        }
    }

    pub fn add(&mut self, units: u128) -> Result<(), VerifyError> {
        self.fun_units = self.fun_units.saturating_add(units);
        match self.fun_limit {
            Some(l) if self.fun_units > l => Err(self.too_complex()),
            _ => Ok(()),
        }
    }

    pub fn add_items(&mut self, unit: u128, items: usize) -> Result<(), VerifyError> {
        self.add(unit.saturating_mul(items as u128))
    }

    /// Charges `items` with each one costing `growth` times the previous.
    pub fn add_items_with_growth(&mut self, unit: u128, items: usize, growth: f32) -> Result<(), VerifyError> {
        if items == 0 {
            return Ok(());
        }
        let mut cost = unit as f64;
        let mut total = 0f64;
        for _ in 0..items.min(1000) {
            total += cost;
            cost *= growth as f64;
            if total > 1e30 {
                break;
            }
        }
        self.add(total.min(1e30) as u128)
    }

    fn too_complex(&self) -> VerifyError {
        VerifyError::module(self.status).with_message("program too complex")
    }
}
